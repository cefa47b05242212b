-- Extends or ends a lease (takeLease) only while its holder's token is on it: a lease that
-- expired may be another holder's now, and only its own holder may extend or end it.
-- KEYS: [1] the lease.
-- ARGV: [1] the holder's token, [2] milliseconds to extend by; absent: delete the lease.
-- Returns 0 when the lease is not this holder's; else PEXPIRE's or DEL's answer (1).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])
