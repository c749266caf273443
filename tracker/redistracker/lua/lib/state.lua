-- The C functions of the hot paths, read once (init, at the first call): a
-- global read costs ~200 instructions in Redis 7 (the globals are an empty
-- table whose __index is the real one), an upvalue read a few.
local rcall, s_byte, s_sub, s_match, s_find, s_format, tonum, nxt

-- DEC[n] is n in decimal for 0 <= n < 1000, DEC3[n] the same on three
-- digits (init): itoa and fp_key write integers with them. string.format's
-- '%.0f', Lua's own number-to-string ('%.14g') and redis.call's ('%.17g',
-- for a number argument) go through printf's floating point, ~2,000
-- instructions an integer; hence also every number a script hands
-- redis.call is a string.
local DEC, DEC3

-- Per call (begin, at the end of this file, sets them from KEYS and ARGV):
-- the keys, the key prefix, now, the fingerprint base level, max attempts.
local K_PENDING, K_LEASES, K_LEASE, K_WORKERS
local K_DELAYED, K_FAILED, K_FAILINFO, K_STATS, K_FPMETA
local K_CRAWL
local PREFIX
local NOW
local FP_BASE
local MAX_ATTEMPTS

-- Bits of one ID bitmap shard: 1018 bytes plus the sds header and NUL fill
-- exactly one 1 KiB allocation (keys.go: idShardBits).
local SHARD_BITS = 8144

-- D accumulates the counter changes of a call (every field of STAT_FIELDS,
-- from 0: begin); flush writes them once.
local D
local STAT_FIELDS = {'pending', 'leased', 'delayed', 'done', 'failed', 'added', 'bytes',
  'revisits', 'unchanged', 'rvids'}
