-- Takes a stream slot in the key's and the person's sets unless either is full (StreamSlots).
-- Slots whose lease has ended (their gateway died without giving them back) are dropped first.
-- KEYS: [1] the API key's set, [2] the person's set.
-- ARGV: [1] now (ms), [2] lease end (ms), [3] slot, [4] key max, [5] person max (0: no limit).
-- Returns 0 when taken, 1 when the key is full, 2 when the person is.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
local keyMax = tonumber(ARGV[4])
local personMax = tonumber(ARGV[5])
if keyMax > 0 and redis.call('ZCARD', KEYS[1]) >= keyMax then return 1 end
if personMax > 0 and redis.call('ZCARD', KEYS[2]) >= personMax then return 2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
local ttl = math.ceil(tonumber(ARGV[2]) - tonumber(ARGV[1]))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 0
