-- The parked runs whose deadline has passed (ParkedRunDeadlines), by Redis's own clock (TIME),
-- so no process's clock decides when a question expired.
-- KEYS: [1] the queue's sorted set of parked-run deadlines.
-- ARGV: [1] how many entries at most.
-- Returns the due entries with their deadlines (ms), flat: {member, score, member, score, ...}.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ms, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
