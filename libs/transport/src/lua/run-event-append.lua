-- Appends events to their runs' logs (RunEventLog.append), each as one step: next seq, append
-- to the run's log, publish on the run's channel. Once a `done` is appended the run is sealed
-- and later appends are dropped (0), so a run has exactly one done and nothing after it. Once
-- the run's cancel record exists only its `done` is accepted (-1), so the worker holding it
-- learns of a cancel at its next step even if the control message was lost. An append that
-- carries an owner epoch is refused (-2) once another worker has taken the run over.
--
-- Each append carries an id of its own, kept with the seq it got: a call sent again after its
-- answer was lost (a failover: ioredis resends what a dead master never answered, which may
-- have run and reached the replica) finds its events appended and answers their seqs again,
-- instead of appending them twice.
--
-- One call carries the appends a process made in one turn of its event loop, for all its runs
-- (on a single Redis) or for the runs of one slot (on a cluster: the keys and the sharded
-- channel of one call then live on one master).
-- KEYS: [1] names a key of the call's first run, only so a cluster routes the call to its slot.
-- ARGV: [1] the finished and [2] the active retention (s), then {{ARGS_PER_EVENT}} arguments per
--   event: run id, the event's JSON after its opening brace, '1' for a done, '2' for an event
--   that closes a cancelled run before its done (accepted after the cancel record), else '0',
--   the epoch or '', and the append's id.
-- Returns each event's seq or refusal (0 sealed, -1 cancelled, -2 fenced), in order.
--
-- The script names each run's keys itself from its id instead of taking them as KEYS: eight
-- keys per event were two thirds of the bytes a worker wrote to Redis. The key names, the
-- publish command and the argument count are filled in by RunEventLog when it loads this file
-- (placeholders in double braces; see lua-scripts.ts): the names come from redis-keys.ts, so
-- script and TypeScript name keys alike, and PUBLISH on a single Redis is SPUBLISH on a cluster.
local out = {}
for i = 0, (#ARGV - 2) / {{ARGS_PER_EVENT}} - 1 do
  local a = 2 + i * {{ARGS_PER_EVENT}}
  local run, body, terminal, epoch, id = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local seqKey, logKey, doneKey = {{SEQ_KEY}}, {{LOG_KEY}}, {{DONE_KEY}}
  local ownerKey, appendsKey = {{OWNER_KEY}}, {{APPENDS_KEY}}
  local result
  local earlier = redis.call('HGET', appendsKey, id)
  if earlier then
    result = tonumber(earlier)
  elseif redis.call('EXISTS', doneKey) == 1 then
    result = 0
  elseif epoch ~= '' and redis.call('GET', ownerKey) ~= epoch then
    result = -2
  elseif terminal == '0' and redis.call('EXISTS', {{CANCEL_KEY}}) == 1 then
    result = -1
  else
    local seq = redis.call('INCR', seqKey)
    local event = '{"seq":' .. seq .. ',' .. body
    redis.call('RPUSH', logKey, event)
    redis.call('HSET', appendsKey, id, seq)
    if terminal == '1' then
      redis.call('SET', doneKey, seq, 'EX', ARGV[1])
      for _, key in ipairs({seqKey, logKey, ownerKey, appendsKey, {{STEPS_KEY}}, {{CALLS_KEY}}, {{PARKED_KEY}}}) do
        redis.call('EXPIRE', key, ARGV[1])
      end
    elseif seq == 1 then
      redis.call('EXPIRE', seqKey, ARGV[2])
      redis.call('EXPIRE', logKey, ARGV[2])
      redis.call('EXPIRE', appendsKey, ARGV[2])
    end
    redis.call('{{PUBLISH}}', {{CHANNEL_KEY}}, event)
    result = seq
  end
  out[i + 1] = result
end
return out
