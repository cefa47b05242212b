-- Reserves a model call's worst case on every budget of its run, or on none (RedisRunBudgets).
-- Each budget's counter is a hash: `spent`, `reserved`, one field per reservation (run id and
-- call number) holding its amount, so the reservation can be settled or given back exactly, and
-- `refused`: what the last call it refused needed at least.
-- The call is granted the most output tokens every budget allows (capped to the claim's), and
-- refused when a budget cannot fit MIN output tokens. A reservation already held under the same
-- field (a call asked again) is replaced, not added to. Amounts are integers: tokens, or
-- micro-units (a cost in pico-units rounded up to them). Arithmetic mirrors budget-lines.ts.
-- KEYS: [1..n] the budgets' counters, [n+1] the run's list of reservations (a set of "counter\nfield").
-- ARGV: [1] field, [2] the claim's max output tokens, [3] MIN output tokens, [4] when the run's
--   list expires (ms), then per budget 5 values: limit, input, per output token, scale (the
--   counter's unit in the amounts' units), when the counter expires (ms).
-- Returns {1, granted output tokens, index of the tightest budget, what it has spent or holds now}
-- or {0, index of the budget that refused, what it has spent or holds}.
local n = #KEYS - 1
local field = ARGV[1]
local cap = tonumber(ARGV[2])
local minOut = tonumber(ARGV[3])
local runList = KEYS[n + 1]

local function amountOf(input, per, out, scale)
  local total = input + out * per
  local rest = total % scale
  return (total - rest) / scale + ((rest > 0) and 1 or 0)
end

local budgets = {}
local granted = cap
local tightest = 1
for i = 1, n do
  local at = 5 + (i - 1) * 5
  local b = { limit = tonumber(ARGV[at]), input = tonumber(ARGV[at + 1]), per = tonumber(ARGV[at + 2]), scale = tonumber(ARGV[at + 3]), expires = ARGV[at + 4] }
  local held = redis.call('HMGET', KEYS[i], 'spent', 'reserved', field)
  b.used = (tonumber(held[1]) or 0) + (tonumber(held[2]) or 0) - (tonumber(held[3]) or 0)
  b.previous = tonumber(held[3]) or 0
  local left = b.limit - b.used
  local needed = amountOf(b.input, b.per, minOut, b.scale)
  if left <= 0 or needed > left then
    -- What the refused call needed: a gateway refuses runs while settled spend leaves less than this.
    redis.call('HSET', KEYS[i], 'refused', string.format('%.0f', needed))
    redis.call('PEXPIREAT', KEYS[i], b.expires)
    return { 0, i, string.format('%.0f', b.used) }
  end
  local out = cap
  if b.per > 0 then
    out = math.min(cap, math.floor((left * b.scale - b.input) / b.per))
    while out > minOut and amountOf(b.input, b.per, out, b.scale) > left do out = out - 1 end
    out = math.min(cap, math.max(out, minOut))
  end
  if out < granted then
    granted = out
    tightest = i
  end
  budgets[i] = b
end

local tightUsed = 0
for i = 1, n do
  local b = budgets[i]
  local amount = amountOf(b.input, b.per, granted, b.scale)
  redis.call('HINCRBY', KEYS[i], 'reserved', string.format('%.0f', amount - b.previous))
  redis.call('HSET', KEYS[i], field, string.format('%.0f', amount))
  redis.call('PEXPIREAT', KEYS[i], b.expires)
  redis.call('SADD', runList, KEYS[i] .. '\n' .. field)
  if i == tightest then tightUsed = b.used + amount end
end
redis.call('PEXPIREAT', runList, ARGV[4])
return { 1, granted, tightest, string.format('%.0f', tightUsed) }
