-- Records a parked run's wait while the caller's epoch owns it (RunLedger.park).
-- KEYS: [1] the run's owner epoch, [2] its parked wait.
-- ARGV: [1] epoch, [2] the wait (JSON), [3] ttl in seconds.
-- Returns 1 when recorded, -1 when fenced (another worker owns the run).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
