-- Compare-and-set of a pending HITL request (HitlRequests): only its owner may decide, only
-- once, and only before its deadline. The run is read in the same step, so a record that
-- expires right after the decision cannot leave the caller without it. The deadline is
-- compared with Redis's own clock (TIME), so no gateway's clock decides whether a decision
-- came in time. The system (ARGV[1] '*': a timeout, a cancel) decides whatever the time.
-- KEYS: [1] the request's hash.
-- ARGV: [1] tenant ('*': the system), [2] user, [3] the new status, [4] message.
-- Returns {'ok', run_id, session_id}, {'missing'} (unknown, expired or another user's),
-- {'expired'} (an owner's decision after `expires_at`: refused, and the request stays for its
-- expiry to close `timeout`, so a late approval can never be applied), or
-- {'decided:<status>'}.
local owner = redis.call('HMGET', KEYS[1], 'tenant_id', 'user_id', 'status', 'run_id', 'session_id', 'expires_at')
if not owner[3] or not owner[4] then return {'missing'} end
if ARGV[1] ~= '*' and (owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2]) then return {'missing'} end
if owner[3] ~= 'pending' then return {'decided:' .. owner[3]} end
if ARGV[1] ~= '*' and owner[6] then
  local now = redis.call('TIME')
  if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) >= tonumber(owner[6]) then return {'expired'} end
end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'message', ARGV[4])
return {'ok', owner[4], owner[5]}
