-- Replaces a call's reservations by what it spent (RedisRunBudgets): each counter's reservation
-- under the field is taken off `reserved` and dropped, and the amount is added to `spent`. A
-- reservation given back already (the run was taken over meanwhile) is spent all the same.
-- KEYS: [1..n] the budgets' counters, [n+1] the run's list of reservations.
-- ARGV: [1] field, [2..n+1] what the call spent on each counter (tokens, or micro-units rounded up).
-- Returns n.
local n = #KEYS - 1
local field = ARGV[1]
for i = 1, n do
  local held = tonumber(redis.call('HGET', KEYS[i], field))
  if held then
    -- A reservation of 0 (a cost budget and an unpriced model) gives nothing back: '-0' is no integer to HINCRBY.
    if held ~= 0 then redis.call('HINCRBY', KEYS[i], 'reserved', string.format('%.0f', -held)) end
    redis.call('HDEL', KEYS[i], field)
  end
  local spent = tonumber(ARGV[i + 1])
  if spent > 0 then redis.call('HINCRBY', KEYS[i], 'spent', ARGV[i + 1]) end
  redis.call('SREM', KEYS[n + 1], KEYS[i] .. '\n' .. field)
end
return n
