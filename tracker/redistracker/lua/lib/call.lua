-- flush writes what the call accumulated (C): an operation calls it last.
local function flush()
  flush_drops()
  flush_push()
  flush_workers()
  for _, f in ipairs(STAT_FIELDS) do
    local n = C.delta[f]
    if n ~= 0 then
      rcall('HINCRBY', K.stats, f, itoa(n))
      C.delta[f] = 0
    end
  end
  if nxt(C.level_delta) ~= nil then
    for f, n in pairs(C.level_delta) do
      if n ~= 0 then rcall('HINCRBY', K.stats, f, itoa(n)) end
    end
  end
  if nxt(C.label_delta) ~= nil then
    for f, n in pairs(C.label_delta) do
      if n ~= 0 then rcall('HINCRBY', K.lstats, f, itoa(n)) end
    end
  end
  fp_flush()
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
  local cur = rcall('GET', K.crawl)
  if cur then
    if seen ~= '' and cur ~= seen then return nil end
    return cur
  end
  if seen ~= '' then return nil end
  if create or tonum(rcall('HGET', K.stats, 'added') or '0') > 0 then
    rcall('SET', K.crawl, fresh)
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

-- begin starts a call of a life-cycle operation: the call's keys (K) and
-- state (C) afresh (state.lua).
local function begin()
  if not S_RUN then init() end
  local prefix = ARGV[1]
  K = call_keys(KEYS, prefix)
  C = {prefix = prefix, now = tonum(ARGV[2]), fp_base = tonum(ARGV[3]), max_attempts = tonum(ARGV[5]),
    delta = {pending = 0, leased = 0, delayed = 0, done = 0, failed = 0, added = 0, bytes = 0,
      revisits = 0, unchanged = 0, rvids = 0},
    level_delta = {}, label_delta = {}, worker_delta = {},
    push = {}, push_levels = {}, push_hosts = {}, push_runs = false,
    records = {}, dropped = {}, drop_tokens = {}, drop_by_group = {},
    label_ids = {}, label_names = {}, level_keys = {}, shard_keys = {}, shard_ready = {}}
end
