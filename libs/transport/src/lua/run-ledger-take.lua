-- A worker takes a run, in one round trip (RunLedger.take): nothing when the run has its done;
-- otherwise raises the owner epoch and reads what the run has done so far.
-- KEYS: [1] done, [2] owner, [3] log, [4] steps, [5] parked, [6] cancel (the run's keys).
-- ARGV: [1] the owner epoch's ttl in seconds.
-- Returns {0} when the run has its done; otherwise {epoch, the run's log, its recorded steps
-- (only on a takeover: a first owner has none), the wait it was parked on (consumed: '' when
-- none), 1 when its cancel is recorded}.
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local epoch = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
local steps = {}
if epoch > 1 then steps = redis.call('LRANGE', KEYS[4], 0, -1) end
local parked = redis.call('GET', KEYS[5]) or ''
redis.call('DEL', KEYS[5])
return {epoch, redis.call('LRANGE', KEYS[3], 0, -1), steps, parked, redis.call('EXISTS', KEYS[6])}
