-- Gives back every reservation a run still holds (RedisRunBudgets): a dead worker's, or a
-- call's that never settled. Each is taken off its counter's `reserved`; nothing is spent.
-- KEYS: [1] the run's list of reservations (a set of "counter\nfield"), [2..] the counters it names.
-- ARGV: none.
-- Returns how many reservations were given back. Members naming a counter not among KEYS stay.
local named = {}
for i = 2, #KEYS do named[KEYS[i]] = true end
local released = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local cut = string.find(member, '\n', 1, true)
  local counter = string.sub(member, 1, cut - 1)
  local field = string.sub(member, cut + 1)
  if named[counter] then
    local held = tonumber(redis.call('HGET', counter, field))
    if held then
      -- A reservation of 0 gives nothing back: '-0' is no integer to HINCRBY.
      if held ~= 0 then redis.call('HINCRBY', counter, 'reserved', string.format('%.0f', -held)) end
      redis.call('HDEL', counter, field)
      released = released + 1
    end
    redis.call('SREM', KEYS[1], member)
  end
end
return released
