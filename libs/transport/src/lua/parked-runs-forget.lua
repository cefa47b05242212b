-- Removes a parked run's deadline entry (ParkedRunDeadlines) only while it still has the
-- deadline the sweep saw: a run that parked again meanwhile keeps its new one.
-- KEYS: [1] the queue's sorted set of parked-run deadlines.
-- ARGV: [1] the entry, [2] the deadline the sweep saw (ms).
-- Returns 1 when removed, 0 when not (gone, or its deadline moved).
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
