-- Pushes a step, or sets an intent, only while the caller's epoch still owns the run
-- (RunLedger.recordStep, RunLedger.intend).
-- KEYS: [1] the run's owner epoch, [2] its steps, [3] its call intents.
-- ARGV: [1] epoch, [2] mode ('step' | 'intent'), [3] payload, [4] field (an intent's
--   call id and argument hash), [5] ttl in seconds.
-- Returns -1 when another worker owns the run; 1 for a step; for an intent, 1 when new and
-- 0 when it existed.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[2] == 'step' then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return 1
end
local added = redis.call('HSETNX', KEYS[3], ARGV[4], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[5])
return added
