-- state.lua: what the library's functions share, declared in one place.
--
-- A library's top level runs once (FUNCTION LOAD), so its locals live on
-- from call to call, and from one crawl (key prefix) to another. What a
-- call sets or fills is therefore no file-level local: it is a field of K
-- (the call's key names) or C (the call's state), two tables begin
-- (call.lua) makes afresh for every call of a life-cycle operation. A call
-- that fails half-way leaves nothing for the next one, and no cache is kept
-- across calls (one would have to be keyed by crawl and proven fresh: a
-- fingerprint table state read from another crawl's fpmeta breaks dedup, a
-- shard seen to exist may since have been reset). The file-level locals
-- below are constants, set at load or by init at the first call.

-- The C functions of the hot paths, read once (init): Redis 7 reads a
-- global through a protected table, an upvalue directly.
local rcall, s_byte, s_sub, s_match, s_find, s_format, tonum, nxt

-- DEC[n] is n in decimal for 0 <= n < 1000, DEC3[n] the same on three
-- digits (init): itoa and fp_key write integers with them, where
-- string.format, Lua's own number-to-string and redis.call's (for a number
-- argument) go through printf's floating point; hence also every number a
-- script hands redis.call is a string.
local DEC, DEC3

-- Bits of one ID bitmap shard: 1018 bytes plus the sds header and NUL fill
-- exactly one 1 KiB allocation (keys.go: idShardBits).
local SHARD_BITS = 8144

-- The counters of the stats hash a call changes (C.delta).
local STAT_FIELDS = {'pending', 'leased', 'delayed', 'done', 'failed', 'added', 'bytes',
  'revisits', 'unchanged', 'rvids'}

-- K: the key names of the call's crawl (begin: call_keys, which keys.go
-- generates). The fixed keys are KEYS[1..n], named as keys.go names them:
-- K.pending, K.lease, K.workers, K.delayed, K.failed, K.failinfo, K.stats,
-- K.fpmeta, K.crawl; those every call may use are built from the prefix:
-- K.labels, K.lstats, K.revisits, K.lease_groups, K.deadlines, K.paused,
-- K.fp_bucket (the prefix of the fingerprint buckets).
local K

-- C: the state of one call (begin):
--   prefix        ARGV[1], the crawl's key prefix (crawl_key builds names with it)
--   now           ARGV[2], now (ms); fp_base ARGV[3], the fingerprint base
--                 level; max_attempts ARGV[5]
--   delta         the changes of the stats counters (every STAT_FIELDS
--                 field, from 0); flush writes them once
--   level_delta   the changes of stats' p1..p9; label_delta those of the
--                 per-label counters (lstats: '<id>:<state>'); flush writes them
--   worker_delta  counters per worker (worker -> field -> n), written at flush
--   push          entries added (add_item), written by flush in one RPUSH;
--                 a marked ID is pushed as a run {lo, hi}, grown while the
--                 next ID follows (push_runs: push holds runs), and the
--                 list's real tail is read once (tail, tail_run) and
--                 rewritten at flush when grown (tail_dirty). Only add and
--                 complete add items, and nothing else touches the list's
--                 tail in them.
--   push_levels   entries of priority p > 0 without a host, per level
--   push_hosts    entries of hosts, per host queue (push_host, flush_hosts)
--   lv            the levels in use (levels_used)
--   records       lease records read ahead (read_records)
--   dropped       the tokens this call dropped; drop_tokens and
--                 drop_by_group their deletions, written at flush
--   label_ids     label name -> id, label_names id -> name, as read
--   level_keys    the key of each priority level
--   shard_keys    the key of each ID bitmap shard; shard_ready those seen
--                 to exist (or made) in this call
--   fp            the fingerprint table's state, read at first use (fp_state)
local C

-- crawl_key is the name of the crawl's key `name` (a suffix keys.go gives, KEY),
-- followed by part (a worker, a shard, a second...) if any.
local function crawl_key(name, part)
  if part then return C.prefix .. KEY[name] .. part end
  return C.prefix .. KEY[name]
end
