-- Takes a run slot for a tenant unless it holds `max` already (TenantRunSlots).
-- KEYS: [1] the tenant's sorted set of runs.
-- ARGV: [1] max, [2] now (ms), [3] run id.
-- Returns -1 when taken, else how many slots the tenant holds.
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then return held end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return -1
