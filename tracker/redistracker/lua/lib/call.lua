-- CLEAN says the last call ended in flush, which leaves every accumulator
-- (D, PD, LD, PUSH, PUSHL, the drops, WSTAT) empty: begin then need not
-- make them anew. An operation calls flush last, touching none after it.
local CLEAN = false

local function flush()
  flush_drops()
  flush_push()
  flush_workers()
  for _, f in ipairs(STAT_FIELDS) do
    local n = D[f]
    if n ~= 0 then
      rcall('HINCRBY', K_STATS, f, itoa(n))
      D[f] = 0
    end
  end
  if nxt(PD) ~= nil then
    for f, n in pairs(PD) do
      if n ~= 0 then rcall('HINCRBY', K_STATS, f, itoa(n)) end
    end
    PD = {}
  end
  if nxt(LD) ~= nil then
    for f, n in pairs(LD) do
      if n ~= 0 then rcall('HINCRBY', K_LSTATS, f, itoa(n)) end
    end
    LD = {}
  end
  fp_flush()
  CLEAN = true
end

-- ---- the crawl record ----

-- STATE_LOST is the error reply of a script that finds the crawl's state
-- gone (the Go side maps its code to tracker.ErrStateLost); it writes nothing.
local STATE_LOST_CODE = 'STATELOST' -- Go: codeStateLost
local STATE_LOST = STATE_LOST_CODE .. ' the crawl record is gone or belongs to another crawl'

-- check_crawl returns the crawl's id, or nil when the state vanished under
-- the caller: it has seen the id `seen` ('' if it has not seen one yet) and
-- the record is now gone or holds another id (a Redis restarted without
-- persistence, a FLUSHALL, a reset and a new seed). With `create` (add), or
-- for a crawl with items but no record (one seeded before records existed),
-- a missing record is written with the id `fresh`. Without an id seen, an
-- empty Redis is a crawl not seeded yet: nothing can tell it from a lost one.
-- Cost: O(1).
local function check_crawl(seen, fresh, create)
  local cur = rcall('GET', K_CRAWL)
  if cur then
    if seen ~= '' and cur ~= seen then return nil end
    return cur
  end
  if seen ~= '' then return nil end
  if create or tonum(rcall('HGET', K_STATS, 'added') or '0') > 0 then
    rcall('SET', K_CRAWL, fresh)
    return fresh
  end
  return ''
end

-- ---- the call ----

-- init sets what the library's top level cannot (it runs without the
-- string library and redis.call in Redis 7.0), once, at the first call.
local function init()
  rcall, s_byte, s_sub, s_match, s_find, s_format = redis.call, string.byte, string.sub, string.match, string.find, string.format
  tonum, nxt = tonumber, next
  S_RUN, S_ITEM, S_HUGE_RANGE = string.char(TAG_RUN), string.char(TAG_ITEM), string.char(TAG_HUGE_RANGE)
  S_EXT = string.char(TAG_EXT)
  DEC, DEC3 = {}, {}
  for n = 0, 999 do DEC[n], DEC3[n] = s_format('%d', n), s_format('%03d', n) end
end

-- begin starts a call: a library's top level runs once (FUNCTION LOAD), so
-- its locals live on from call to call, and from one crawl (key prefix) to
-- another. Every one that a call sets or fills is set afresh here: the keys
-- and arguments, and every cache above (a cache kept across calls would
-- have to be keyed by crawl and proven fresh, e.g. FP read from another
-- crawl's fpmeta breaks dedup; a shard seen to exist may since have been
-- reset), each made anew only when the last call filled it. The
-- accumulators are made anew unless the last call ended in flush (CLEAN): a
-- call that failed half-way leaves nothing behind. What stays is constant:
-- init's, the field lists, ZEROS, the functions.
local function begin()
  if not S_RUN then init() end
  K_PENDING, K_LEASES, K_LEASE, K_WORKERS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  K_DELAYED, K_FAILED, K_FAILINFO, K_STATS, K_FPMETA = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
  K_CRAWL = KEYS[10]
  PREFIX = ARGV[1]
  NOW = tonum(ARGV[2])
  FP_BASE = tonum(ARGV[3])
  MAX_ATTEMPTS = tonum(ARGV[5])
  K_LABELS, K_LSTATS, K_REVISITS = PREFIX .. 'labels', PREFIX .. 'lstats', PREFIX .. 'revisits'
  K_GROUPS, K_DEADLINES, PREFIX_FP = PREFIX .. 'lg', PREFIX .. 'deadlines', PREFIX .. 'fp:'
  if not CLEAN then
    D = {pending = 0, leased = 0, delayed = 0, done = 0, failed = 0, added = 0, bytes = 0,
      revisits = 0, unchanged = 0, rvids = 0}
    LD, PD = {}, {}
    DROP_TOKENS, DROP_BY_GROUP = {}, {}
    PUSH, PUSHL, TAIL, TAIL_RUN, TAIL_DIRTY, PUSH_RUNS = {}, {}, nil, nil, nil, false
    WSTAT = {}
  end
  CLEAN = false
  if nxt(LID) ~= nil then LID = {} end
  if nxt(LNAME) ~= nil then LNAME = {} end
  if LEVEL_PREFIX ~= PREFIX then LEVEL_KEYS, LEVEL_PREFIX = {}, PREFIX end -- by prefix only: kept
  if nxt(REC) ~= nil then REC = {} end
  if nxt(DROPPED) ~= nil then DROPPED = {} end
  if nxt(shard_ready) ~= nil then shard_ready = {} end
  if nxt(SHARD_KEYS) ~= nil then SHARD_KEYS = {} end
  FP = nil
end
