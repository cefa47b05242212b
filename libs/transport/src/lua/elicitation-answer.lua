-- Compare-and-set of a pending elicitation (ElicitationRequests): only its owner answers
-- (owner '*': the worker, for an expiry or a cancel), once, and not after its expiry.
-- KEYS: [1] the request's hash.
-- ARGV: [1] tenant ('*': the worker), [2] user, [3] the new status, [4] content (JSON),
--   [5] reason, [6] now in epoch ms ('' for the worker: no expiry check).
-- Returns {'ok', run_id, session_id}, {'missing'} (unknown, expired away or another user's),
-- {'expired'}, or {'answered:<status>'}.
local h = redis.call('HMGET', KEYS[1], 'tenant_id', 'user_id', 'status', 'run_id', 'session_id', 'expires_at')
if not h[3] or not h[4] then return {'missing'} end
if ARGV[1] ~= '*' and (h[1] ~= ARGV[1] or h[2] ~= ARGV[2]) then return {'missing'} end
if h[3] ~= 'pending' then return {'answered:' .. h[3]} end
if ARGV[6] ~= '' and h[6] and tonumber(h[6]) <= tonumber(ARGV[6]) then return {'expired'} end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'content', ARGV[4], 'reason', ARGV[5])
return {'ok', h[4], h[5]}
