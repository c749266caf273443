-- lib.lua: helpers shared by every tracker operation. The Go side (redis.go:
-- buildLibrary) makes one Redis Functions library of it: this file, then each
-- operation's file as a function, each registered as ds_<hash>_<op>; each
-- operation is one FCALL (FCALL_RO for those that write nothing).
--
-- What redis-server spends (callgrind, perf; bench-tracker's
-- redis_cpu_us_per_item and -only lifesplit measure it): this file's top
-- level (constants, ~100 closures) runs once, at FUNCTION LOAD. As a script
-- prepended to each operation (EVALSHA) it ran at every call: ~12.5 µs of
-- redis-server per call, 0.6 µs per item of a 64-item batch's add, checkout
-- and complete. Its locals therefore live across calls: begin (at the end)
-- sets every per-call one afresh. KEYS and ARGV are the library's locals
-- (upvalues), set by each function's callback. A global read (string,
-- tonumber, redis) costs ~200, Redis 7 reads globals through a protected
-- table, so the code reads the C functions it calls through upvalues
-- (rcall, s_byte, ... set by init); number-to-string through printf's
-- floating point costs ~2k (itoa writes integers from digit tables, and no
-- number is handed to redis.call, which would print it with '%.17g'), a
-- decimal's tonumber ~1k (strtod), a hex one's far less (strtoul); each
-- argument and each value returned is a Lua string made or read, ~1k, so
-- the wire formats send and return only what an item needs (add_item's 3,
-- complete's 3 per plain completion, checkout's 1 per plain lease, its
-- record); batch commands (one HSET/ZADD/SADD per call) beat a redis.call
-- per item, each ~3-8k, and a call skips what its crawl lacks (checkout's
-- one EXISTS). callgrind, redis-server instructions per item of a batch of
-- 64 (add, checkout, complete): 76.7k before these, 57.7k after
-- (docs/scale.md).
--
-- The contract every script shares (key names: tracker/keys.go):
--   KEYS[1] pending   list of entries (below), FIFO: RPUSH new, LINDEX/LPOP 0 at checkout
--   KEYS[2] leases    zset token -> deadline (ms), as the scripts before lease groups kept
--                     every lease: read and drained (requeue, extend, drop), never
--                     added to; the leases of today are in deadlines (lease groups below)
--   KEYS[3] lease     hash token -> record: "attempts:depth:#worker:<worker><key>",
--                     prefixed "+<meta>;" for an item with meta (below)
--   KEYS[4] workers   zset worker -> last seen + ttl (ms)
--   KEYS[5] delayed   zset entry -> due (ms)
--   KEYS[6] failed    zset key -> failed at (ms)
--   KEYS[7] failinfo  hash key -> "attempts:depth:reason", prefixed "+<meta>;" as a record
--   KEYS[8] stats     hash of counters: pending leased delayed done failed added bytes;
--                     p1..p9 (pending at priority 1..9, only once one was used),
--                     pskip (the starvation guard's count, tracker.StarveEvery)
--   KEYS[9] fpmeta    hash: the fingerprint table's linear-hashing state
--   KEYS[10] crawl    string: the crawl's id, written by the first add (check_crawl)
--   KEYS[11]          (checkout, requeue of a worker) wl:<worker>, that worker's lease groups
--   ARGV[1] key prefix "distscrape:{crawl}:" of the derived keys (documented in
--           keys.go: id:<shard>, fp:<bucket>, wl:<worker>, w:<worker>; all in
--           the crawl's slot)
--   ARGV[2] now (ms)   ARGV[3] fingerprint base level   ARGV[4] fingerprint bucket load
--   ARGV[5] max attempts; ARGV[6...] belong to the operation.
--
-- Entries of the pending list (the first byte, a TAG_ below, says which):
--   <key>                          depth 0, attempts 0 (first byte above TAG_MAX)
--   TAG_RUN "lo:hi"                IDs lo..hi (< 2^40) already marked seen: coalesced adds
--   TAG_RANGE "lo:hi"              IDs lo..hi (< 2^40) of AddRange, deduplicated when carved
--   TAG_ITEM "depth:attempts:key"  any item
--   TAG_HUGE_RANGE "lo:hi"         IDs lo..hi (>= 2^40, decimal strings) of AddRange,
--                                  deduplicated by fingerprint when carved
--   TAG_EXT "depth:attempts:meta;key"  an item with meta (below)
-- TAG_NAMED "depth:attempts:meta;key" is TAG_EXT with label names for IDs:
-- only in add arguments (Go writes it; add_item stores it as TAG_EXT).
-- TAG_REVISIT n <n bytes> <entry>: a revisit header before an entry above:
-- TAG_REVISIT, n, then n bytes only Go encodes and reads (flags, visits,
-- validators: redis_revisit.go). Lease records carry it before the key; the
-- revisit index's lists (rv:<s>) hold such entries, attempts 0.
--
-- Meta is what an item carries beyond key, depth and attempts, only when it
-- has some (a crawl without priorities, labels or revisits never writes it):
-- "p:l:v:f", trailing zero or empty fields left out ("3", "0:1.4", "0::2:1"):
--   p  priority 1..9 (tracker.Item.Priority; 0 is level 0, the pending list)
--   l  label IDs of the crawl's label table (derived key labels), '.'-joined;
--      names ','-joined in TAG_NAMED and in what scripts return to Go
--   v  visits (tracker.Lease.Visits: revisits)
--   f  flags, a bitmask: FLAG_VALIDATORS (validators kept for the key)
-- Parsers ignore fields after these: new ones are appended.
-- An item of priority p > 0 waits in the derived list pending:<p>; stats'
-- p<p> counts it (checkout reads p1..p9 in one HMGET: O(1)).
--
-- The wire format's bytes, named once. Each constant names its Go twin in
-- redis_encode.go; TestWireConstantsAgree reads this file and checks them.
local TAG_RUN = 1        -- Go: tagRun
local TAG_RANGE = 2      -- Go: tagRange
local TAG_ITEM = 3       -- Go: tagItem
local TAG_HUGE_RANGE = 4 -- Go: tagHugeRange
local TAG_EXT = 5        -- Go: tagExt
local TAG_NAMED = 6      -- Go: tagNamed
local TAG_REVISIT = 7    -- Go: tagRevisit
local TAG_MAX = 7        -- Go: tagMax (a bare key's first byte is above it)
local FLAG_VALIDATORS = 1 -- Go: flagValidators
local STARVE_EVERY = 8   -- Go: starveEvery (tracker.StarveEvery)
-- The tags as strings: begin sets them at the first call (a library's top
-- level runs without the string library in Redis 7.0).
local S_RUN, S_ITEM, S_HUGE_RANGE
local S_EXT

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

-- dec writes a non-negative integer below 2^53 in decimal, three digits at
-- a time.
local function dec(n)
  if n < 1000 then return DEC[n] end
  local a = n % 1000
  n = (n - a) / 1000
  if n < 1000 then return DEC[n] .. DEC3[a] end
  local b = n % 1000
  n = (n - b) / 1000
  if n < 1000 then return DEC[n] .. DEC3[b] .. DEC3[a] end
  local c = n % 1000
  n = (n - c) / 1000
  if n < 1000 then return DEC[n] .. DEC3[c] .. DEC3[b] .. DEC3[a] end
  local d = n % 1000
  return dec((n - d) / 1000) .. DEC3[d] .. DEC3[c] .. DEC3[b] .. DEC3[a]
end

-- itoa writes an integer without exponent (Lua numbers are doubles); what
-- is no integer below 2^53 in magnitude goes through '%.0f'.
local function itoa(n)
  local s = DEC[n] -- 0..999; no index for a fraction
  if s then return s end
  if n % 1 ~= 0 or n >= 9007199254740992 or n <= -9007199254740992 then return s_format('%.0f', n) end
  if n < 0 then return '-' .. dec(-n) end
  return dec(n)
end

-- D accumulates the counter changes of a call (every field of STAT_FIELDS,
-- from 0: begin); flush writes them once.
local D
local STAT_FIELDS = {'pending', 'leased', 'delayed', 'done', 'failed', 'added', 'bytes',
  'revisits', 'unchanged', 'rvids'}

-- split_revisit splits what starts with a revisit header (TAG_REVISIT, n,
-- n bytes) at position p (default 1) into the header and the rest; '' and
-- the whole for anything else.
local function split_revisit(s, p)
  p = p or 1
  if s_byte(s, p) ~= TAG_REVISIT then return '', s_sub(s, p) end
  local e = p + 1 + s_byte(s, p + 1)
  return s_sub(s, p, e), s_sub(s, e + 1)
end

-- rv_mark sets (v 1) or clears (v 0) the bit of key, a numeric ID below
-- 2^40 as its revisit header hdr says (flag bit 0), in the derived bitmap
-- rvid:<shard>: the IDs with a revisit waiting or in flight, which a recrawl
-- of the ranges leaves to the revisit index. stats' rvids counts the bits set.
local function rv_mark(key, hdr, v)
  if hdr == '' or s_byte(hdr, 3) % 2 == 0 then return end
  local id = tonum(key)
  local s = math.floor(id / SHARD_BITS)
  if rcall('SETBIT', PREFIX .. 'rvid:' .. itoa(s), itoa(id - s * SHARD_BITS), itoa(v)) ~= v then
    D.rvids = D.rvids + (v == 1 and 1 or -1)
  end
end

-- ---- meta (priority, labels, visits, flags) ----

-- meta_dec parses "p:l:v:f" (fields may be missing) into a table.
local function meta_dec(ms)
  local p, l, v, f = s_match(ms, '^(%d*):?([^:]*):?(%d*):?(%d*)')
  return {p = tonum(p) or 0, l = l or '', v = tonum(v) or 0, f = tonum(f) or 0}
end

-- meta_enc writes m, or returns nil when m is nil or carries nothing.
local function meta_enc(m)
  if not m then return nil end
  local t = {itoa(m.p), m.l, itoa(m.v), itoa(m.f)}
  local n = 4
  -- Field 2 is labels: a name may be '0', only an empty one is left out.
  while n > 0 and (t[n] == '' or (n ~= 2 and t[n] == '0')) do n = n - 1 end
  if n == 0 then return nil end
  return table.concat(t, ':', 1, n)
end

local function entry(key, depth, attempts, meta)
  local ms = meta_enc(meta)
  if ms then return S_EXT .. itoa(depth) .. ':' .. itoa(attempts) .. ':' .. ms .. ';' .. key end
  if depth == 0 and attempts == 0 and s_byte(key, 1) > TAG_MAX then return key end
  return S_ITEM .. itoa(depth) .. ':' .. itoa(attempts) .. ':' .. key
end

-- parse_ext parses a TAG_EXT (or TAG_NAMED) entry: key, depth, attempts, meta.
local function parse_ext(e)
  local d, a, ms, p = s_match(e, '^.(%d+):(%d+):([^;]*);()')
  return s_sub(e, p), tonum(d), tonum(a), meta_dec(ms)
end

-- with_meta prefixes a record or failinfo value with "+meta;" when m carries any.
local function with_meta(v, m)
  local ms = meta_enc(m)
  if ms then return '+' .. ms .. ';' .. v end
  return v
end

-- split_meta undoes with_meta: the value without the prefix, and its meta (or nil).
local function split_meta(v)
  if s_byte(v, 1) ~= 43 then return v, nil end -- '+'
  local ms, q = s_match(v, '^%+([^;]*);()')
  return s_sub(v, q), meta_dec(ms)
end

local function record(key, depth, attempts, worker, meta)
  return with_meta(itoa(attempts) .. ':' .. itoa(depth) .. ':' .. itoa(#worker) .. ':' .. worker .. key, meta)
end

-- record_head returns a function of (key, depth, attempts) making the
-- records of worker's leases (record's format), each head formatted once: a
-- batch's items mostly share depth and attempts, and string.format is the
-- costly part of a record.
local function record_head(worker)
  local heads, wlen = {}, ':' .. itoa(#worker) .. ':' .. worker
  return function(key, depth, attempts, hdr)
    local byd = heads[depth]
    if not byd then
      byd = {}
      heads[depth] = byd
    end
    local h = byd[attempts]
    if not h then
      h = itoa(attempts) .. ':' .. itoa(depth) .. wlen
      byd[attempts] = h
    end
    if hdr and hdr ~= '' then return h .. hdr .. key end
    return h .. key
  end
end

local function parse_record(rec)
  local meta
  rec, meta = split_meta(rec)
  local a, d, n, p = s_match(rec, '^(%d+):(%d+):(%d+):()')
  n = tonum(n)
  local hdr, key = split_revisit(rec, p + n)
  return key, tonum(d), tonum(a), s_sub(rec, p, p + n - 1), meta, hdr
end

-- ---- labels: the crawl's table (derived key labels: name -> id, '#'<id> ->
-- name, '#' -> the last id given) and per-label counters (derived key
-- lstats: '<id>:<state>' -> count, for labeled items only) ----

local K_LABELS, K_LSTATS -- PREFIX .. 'labels', 'lstats' (begin)
local LID, LNAME = {}, {}

-- label_id returns name's id, giving it the next one the first time.
local function label_id(name)
  local id = LID[name]
  if id then return id end
  id = rcall('HGET', K_LABELS, name)
  if not id then
    id = itoa(rcall('HINCRBY', K_LABELS, '#', '1'))
    rcall('HSET', K_LABELS, name, id, '#' .. id, name)
  end
  LID[name] = id
  return id
end

-- label_names turns '.'-joined ids into ','-joined names.
local function label_names(l)
  local out = {}
  for id in string.gmatch(l, '%d+') do
    local name = LNAME[id]
    if not name then
      name = rcall('HGET', K_LABELS, '#' .. id) or ('#' .. id)
      LNAME[id] = name
    end
    out[#out + 1] = name
  end
  return table.concat(out, ',')
end

-- meta_out is m as the scripts return it to Go: label names for ids; '' for none.
local function meta_out(m)
  if not m then return '' end
  local ms = meta_enc({p = m.p, l = label_names(m.l), v = m.v, f = m.f})
  return ms or ''
end

-- has_label says whether m carries label id lid.
local function has_label(m, lid)
  return m ~= nil and m.l ~= '' and s_find('.' .. m.l .. '.', '.' .. lid .. '.', 1, true) ~= nil
end

-- LD accumulates the per-label counter changes; flush writes them.
local LD = {}

-- lmove counts m's labels out of state `from` and into `to` (either may be nil).
local function lmove(m, from, to)
  if not m or m.l == '' then return end
  for id in string.gmatch(m.l, '%d+') do
    if from then
      local f = id .. ':' .. from
      LD[f] = (LD[f] or 0) - 1
    end
    if to then
      local f = id .. ':' .. to
      LD[f] = (LD[f] or 0) + 1
    end
  end
end

-- ---- priority levels ----

-- PD accumulates the changes of stats' p1..p9; flush writes them.
local PD = {}
local LEVEL_KEYS, LEVEL_PREFIX = {}, nil -- the level keys of the crawl with key prefix LEVEL_PREFIX

local function level_key(p)
  if p == 0 then return K_PENDING end
  local k = LEVEL_KEYS[p]
  if not k then
    k = PREFIX .. 'pending:' .. itoa(p)
    LEVEL_KEYS[p] = k
  end
  return k
end

local P_FIELDS = {'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'}

local function level_count(p, n)
  if p > 0 then
    local f = P_FIELDS[p]
    PD[f] = (PD[f] or 0) + n
  end
end

-- level_of is the priority of an entry (0 unless TAG_EXT) and its meta.
local function level_of(e)
  if s_byte(e, 1) == TAG_REVISIT then
    local _
    _, e = split_revisit(e)
  end
  if s_byte(e, 1) ~= TAG_EXT then return 0, nil end
  local _, _, _, m = parse_ext(e)
  return m.p, m
end

-- pend puts entry e, of priority p, back in pending: at the head of its
-- level (front: it was leased first) or at the tail.
local function pend(e, p, front)
  rcall(front and 'LPUSH' or 'RPUSH', level_key(p), e)
  level_count(p, 1)
  D.pending = D.pending + 1
end

-- REC caches lease records read by prefetch; DROPPED holds the tokens this
-- script has dropped (their deletion is written at flush).
local REC, DROPPED = {}, {}

-- read_records reads the lease records of toks into REC, one HMGET per
-- 1000 (Lua's unpack has a stack limit).
local function read_records(toks)
  for i = 1, #toks, 1000 do
    local j = math.min(i + 999, #toks)
    local recs = rcall('HMGET', K_LEASE, unpack(toks, i, j))
    for k = i, j do REC[toks[k]] = recs[k - i + 1] end
  end
end

-- prefetch reads the records of tokens ARGV[first], ARGV[first+step], ...
local function prefetch(first, step)
  local toks = {}
  for i = first, #ARGV, step do toks[#toks + 1] = ARGV[i] end
  read_records(toks)
end

-- held returns the lease of token if it still leases key, else nil.
local function held(token, key)
  if DROPPED[token] then return nil end
  local rec = REC[token]
  if rec == nil then rec = rcall('HGET', K_LEASE, token) end
  if not rec then return nil end
  local k, d, a, w, m, h = parse_record(rec)
  if k ~= key then return nil end
  return {key = k, depth = d, attempts = a, worker = w, meta = m, hdr = h}
end

-- call_multi runs cmd key args... in chunks (Lua's unpack has a stack limit);
-- step is even, so pairs stay together.
local function call_multi(cmd, key, args, step)
  for i = 1, #args, step do
    rcall(cmd, key, unpack(args, i, math.min(i + step - 1, #args)))
  end
end

-- ---- lease groups ----
-- The leases of one checkout call form a group: their tokens are the call's
-- prefix (TOKEN_PREFIX bytes, ending in '.') and a counter 1..n. The zset
-- deadlines and the worker's set wl:<worker> hold the group once, its
-- prefix, instead of every token: a member and a score per item were the
-- largest part of the Redis cost of a lease. The derived hash lg keeps, per
-- group g, its live leases (field g), plus SPLIT once Extend gave some of
-- them a deadline of their own (one field read and counted down in one
-- HINCRBY), and its size (g..'n'). Invariant: every live lease's record is
-- found from deadlines, through its own token (extended apart from its
-- group) or through its group's prefix, or from leases (a token leased by
-- the scripts before groups); requeue_group skips the tokens with their own
-- entry while the group is split.
-- Groups live in a zset of their own, not in leases, so that a worker still
-- running the scripts before groups, in a fleet being upgraded, never sees
-- one: its reaper would take a group's prefix for a token without a record
-- and drop the entry, and with it the group's leases. Such a worker reaps
-- and requeues its own leases only; these scripts handle both.
local TOKEN_PREFIX = 17 -- Go: tokenPrefixLen (16 hex digits and '.')
local SPLIT = 1099511627776 -- Go: groupSplit (2^40, far above any group's size)
local K_GROUPS, K_DEADLINES -- PREFIX .. 'lg', 'deadlines' (begin)

-- group_of is the group prefix of a token.
local function group_of(token) return s_sub(token, 1, TOKEN_PREFIX) end

-- Lease deletions are collected and written in one call per key at flush.
local DROP_TOKENS, DROP_BY_GROUP = {}, {}

-- drop_lease drops the lease of token, of worker's group g (group_of(token)
-- when nil).
local function drop_lease(token, worker, g)
  DROPPED[token] = true
  DROP_TOKENS[#DROP_TOKENS + 1] = token
  g = g or group_of(token)
  local d = DROP_BY_GROUP[g]
  if not d then
    d = {worker = worker}
    DROP_BY_GROUP[g] = d
  end
  d[#d + 1] = token
  D.leased = D.leased - 1
end

-- group_done forgets group g of worker, all its leases gone.
local function group_done(g, worker)
  rcall('ZREM', K_DEADLINES, g)
  rcall('SREM', PREFIX .. 'wl:' .. worker, g)
  rcall('HDEL', K_GROUPS, g, g .. 'n')
end

-- flush_drops deletes the dropped leases' records and counts them out of
-- their groups: a few calls per group, none per lease unless the group is
-- split (its own entries go) or its leases predate groups (per token).
local function flush_drops()
  if #DROP_TOKENS == 0 then return end
  call_multi('HDEL', K_LEASE, DROP_TOKENS, 1000)
  for g, toks in pairs(DROP_BY_GROUP) do
    local live = rcall('HINCRBY', K_GROUPS, g, itoa(-#toks))
    if live < 0 then -- no such group: leases of tokens of their own
      rcall('HDEL', K_GROUPS, g)
      call_multi('ZREM', K_LEASES, toks, 1000)
      call_multi('SREM', PREFIX .. 'wl:' .. toks.worker, toks, 1000)
    else
      if live >= SPLIT then -- split: the dropped may have entries of their own
        live = live - SPLIT
        call_multi('ZREM', K_DEADLINES, toks, 1000)
      end
      if live == 0 then group_done(g, toks.worker) end
    end
  end
  DROP_TOKENS, DROP_BY_GROUP = {}, {}
end

-- to_failed puts a leased item in failed.
local function to_failed(key, depth, attempts, reason, meta)
  rcall('ZADD', K_FAILED, ARGV[2], key)
  rcall('HSET', K_FAILINFO, key, with_meta(itoa(attempts) .. ':' .. itoa(depth) .. ':' .. reason, meta))
  D.failed = D.failed + 1
  lmove(meta, 'leased', 'failed')
end

-- parse_failinfo returns attempts, depth, reason and meta (or nil).
local function parse_failinfo(info)
  local v, m = split_meta(info)
  local a, d, p = s_match(v, '^(%d+):(%d+):()')
  return tonum(a) or 0, tonum(d) or 0, p and s_sub(v, p) or '', m
end

-- ---- numeric IDs below 2^40: a bitmap in 1 KiB string shards ----

local ZEROS
local shard_ready = {}

local SHARD_KEYS = {}

local function id_shard(id)
  local s = math.floor(id / SHARD_BITS)
  local k = SHARD_KEYS[s]
  if not k then
    k = PREFIX .. 'id:' .. itoa(s)
    SHARD_KEYS[s] = k
  end
  return k, id - s * SHARD_BITS
end

-- id_mark marks id seen and reports whether it was new. A shard is created at
-- its full size at once: SETBIT would grow it greedily (up to twice the size).
local function id_mark(id)
  local k, off = id_shard(id)
  if not shard_ready[k] then
    if rcall('EXISTS', k) == 0 then
      ZEROS = ZEROS or string.rep('\0', SHARD_BITS / 8)
      rcall('SET', k, ZEROS)
    end
    shard_ready[k] = true
  end
  return rcall('SETBIT', k, itoa(off), '1') == 0
end

-- ---- strings and IDs >= 2^40: 64-bit fingerprint members in intsets ----
-- Linear hashing over buckets fp:<b>: b = x mod 2^level, or x mod 2^(level+1)
-- below the split pointer; a bucket is split when the table's load passes
-- `load` per bucket, so every bucket stays an intset (<= 512 entries).

local FP

local function fp_state()
  if not FP then
    local m = rcall('HMGET', K_FPMETA, 'base', 'load', 'level', 'split', 'n')
    local base = tonum(m[1]) or FP_BASE
    FP = {base = base, load = tonum(m[2]) or tonum(ARGV[4]), level = tonum(m[3]) or base,
          split = tonum(m[4]) or 0, n = tonum(m[5]) or 0, dirty = m[3] == false, new = m[3] == false}
    FP.level0, FP.split0 = FP.level, FP.split
  end
  return FP
end

-- fp_flush writes what changed: the count, the split pointer and level
-- when a bucket split, everything for a new table.
local function fp_flush()
  if not (FP and FP.dirty) then return end
  if FP.new then
    rcall('HSET', K_FPMETA, 'base', itoa(FP.base), 'load', itoa(FP.load), 'level', itoa(FP.level),
      'split', itoa(FP.split), 'n', itoa(FP.n))
  elseif FP.level ~= FP.level0 or FP.split ~= FP.split0 then
    rcall('HSET', K_FPMETA, 'level', itoa(FP.level), 'split', itoa(FP.split), 'n', itoa(FP.n))
  else
    rcall('HSET', K_FPMETA, 'n', itoa(FP.n))
  end
end

local PREFIX_FP -- PREFIX .. 'fp:' (begin)

-- fp_key is the key of bucket b (< 2^40): one concatenation, three digits
-- at a time (dec), where Lua's own b .. '' would print it with '%.14g'.
local function fp_key(b)
  if b < 1000 then return PREFIX_FP .. DEC[b] end
  local a = b % 1000
  b = (b - a) / 1000
  if b < 1000 then return PREFIX_FP .. DEC[b] .. DEC3[a] end
  local c = b % 1000
  b = (b - c) / 1000
  if b < 1000 then return PREFIX_FP .. DEC[b] .. DEC3[c] .. DEC3[a] end
  local d = b % 1000
  return PREFIX_FP .. dec((b - d) / 1000) .. DEC3[d] .. DEC3[c] .. DEC3[a]
end

-- low_bits returns the 64-bit two's complement integer written in decimal
-- in s, modulo m (a power of two, at most 2^30).
local function low_bits(s, m)
  local neg = s_byte(s, 1) == 45
  local r = 0
  for i = neg and 2 or 1, #s do r = (r * 10 + s_byte(s, i) - 48) % m end
  if neg and r ~= 0 then r = m - r end
  return r
end

-- fp_split moves the members of the bucket under the split pointer whose next
-- hash bit is 1 to their new bucket. Cost O(bucket), amortised O(1) per add.
local function fp_split(st)
  local L, s = st.level, st.split
  local bit = 2 ^ (L - st.base) -- member bit i is hash bit base+i
  local src, dst = fp_key(s), fp_key(s + 2 ^ L)
  local movers = {}
  for _, m in ipairs(rcall('SMEMBERS', src)) do
    if low_bits(m, bit * 2) >= bit then movers[#movers + 1] = m end
  end
  for i = 1, #movers, 1000 do
    local j = math.min(i + 999, #movers)
    rcall('SADD', dst, unpack(movers, i, j))
    rcall('SREM', src, unpack(movers, i, j))
  end
  s = s + 1
  if s == 2 ^ L then L, s = L + 1, 0 end
  st.level, st.split = L, s
end

-- fp_bucket is the bucket of a fingerprint's x (its low 40 hash bits) in
-- the table's state st: x mod 2^level, or mod 2^(level+1) below the split
-- pointer.
local function fp_bucket(st, x)
  local L = st.level
  if st.mod_level ~= L then st.mod, st.mod2, st.mod_level = 2 ^ L, 2 ^ (L + 1), L end -- no pow() per item
  local b = x % st.mod
  if b < st.split then b = x % st.mod2 end
  return b
end

-- fp_add adds a fingerprint (x: its low 40 hash bits; member: 64 bits from hash
-- bit `base` on, as a signed decimal) and reports whether it was new.
local function fp_add(x, member)
  local st = fp_state()
  if rcall('SADD', fp_key(fp_bucket(st, x)), member) == 0 then return false end
  st.n = st.n + 1
  st.dirty = true
  local L = st.level
  if st.n > st.load * (st.mod + st.split) and L < 39 and L - st.base < 29 then fp_split(st) end -- st.mod = 2^L
  return true
end

-- hex_to_decimal converts 16 hex digits (a 64-bit two's complement integer)
-- to signed decimal, with base 10^7 limbs so doubles stay exact.
local function hex_to_decimal(h)
  local neg = tonum(s_sub(h, 1, 1), 16) >= 8
  local chunks = {}
  for i = 1, 16, 4 do chunks[#chunks + 1] = tonum(s_sub(h, i, i + 3), 16) end
  if neg then -- two's complement: invert and add one
    local carry = 1
    for i = 4, 1, -1 do
      local v = 65535 - chunks[i] + carry
      if v >= 65536 then v, carry = v - 65536, 1 else carry = 0 end
      chunks[i] = v
    end
  end
  local limbs = {0}
  for _, c in ipairs(chunks) do
    local carry = c
    for i = 1, #limbs do
      local v = limbs[i] * 65536 + carry
      limbs[i] = v % 10000000
      carry = math.floor(v / 10000000)
    end
    while carry > 0 do
      limbs[#limbs + 1] = carry % 10000000
      carry = math.floor(carry / 10000000)
    end
  end
  local s = itoa(limbs[#limbs])
  for i = #limbs - 1, 1, -1 do s = s .. s_format('%07d', limbs[i]) end
  if neg then s = '-' .. s end
  return s
end

-- fp_huge is the fingerprint of an ID >= 2^40 (its decimal string): SHA-1,
-- u = bytes 0-7 and v = bytes 8-15 big-endian. Go's hugeFingerprint agrees.
local function fp_huge(s)
  local h = redis.sha1hex(s)
  local w = s_sub(h, 17, 32) .. s_sub(h, 1, 16) -- v..u, 128 bits
  local q = FP_BASE / 4
  return tonum(s_sub(h, 7, 16), 16), hex_to_decimal(s_sub(w, 17 - q, 32 - q))
end

local function dec_inc(s)
  local i = #s
  while i > 0 and s_byte(s, i) == 57 do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #s) end
  return s_sub(s, 1, i - 1) .. string.char(s_byte(s, i) + 1) .. string.rep('0', #s - i)
end

local function dec_le(a, b)
  if #a ~= #b then return #a < #b end
  return a <= b
end

-- ---- pending ----

-- Items added (add_item) are appended to PUSH and written by flush in one
-- RPUSH. A marked ID is pushed as a run {lo, hi}, grown while the next ID
-- follows (the list's real tail too, read once), and written as an entry at
-- flush. Only add.lua and complete.lua add items, and nothing else touches
-- the list's tail in them.
local PUSH = {}
local PUSH_RUNS = false -- PUSH holds runs (push_id's tables)
local PUSHL = {} -- entries of priority p > 0, per level
local TAIL, TAIL_RUN, TAIL_DIRTY

-- as_run parses an entry that is a run of marked IDs (TAG_RUN "lo:hi", or a
-- plain canonical ID below 2^40) into {lo, hi}; anything else gives nil.
local function as_run(e)
  local c = s_byte(e, 1)
  if c == TAG_RUN then
    local lo, hi = s_match(e, '^' .. S_RUN .. '(%d+):(%d+)$')
    return {tonum(lo), tonum(hi)}
  end
  if c >= 49 and c <= 57 and #e <= 13 and not s_find(e, '%D') then
    local v = tonum(e)
    if v < 1099511627776 then return {v, v} end
  end
  return nil
end

local function run_entry(r)
  if r[1] == r[2] then return itoa(r[1]) end
  return S_RUN .. itoa(r[1]) .. ':' .. itoa(r[2])
end

-- push_id appends a marked ID (depth 0, attempts 0), extending the run of
-- consecutive IDs at the tail instead of adding an entry when it can.
local function push_id(id)
  local n = #PUSH
  local last
  if n > 0 then
    last = PUSH[n]
    if type(last) ~= 'table' then last = nil end
  else
    if TAIL == nil then
      TAIL = rcall('LINDEX', K_PENDING, '-1') or false
      if TAIL then TAIL_RUN = as_run(TAIL) end
    end
    last = TAIL_RUN
  end
  if last and last[2] + 1 == id then
    last[2] = id
    if n == 0 then TAIL_DIRTY = true end
    return
  end
  PUSH[n + 1] = {id, id}
  PUSH_RUNS = true
end

local function flush_push()
  if TAIL_DIRTY then rcall('LSET', K_PENDING, '-1', run_entry(TAIL_RUN)) end
  if PUSH[1] ~= nil then
    if PUSH_RUNS then
      for i = 1, #PUSH do
        if type(PUSH[i]) == 'table' then PUSH[i] = run_entry(PUSH[i]) end
      end
      PUSH_RUNS = false
    end
    call_multi('RPUSH', K_PENDING, PUSH, 1000)
    PUSH = {}
  end
  if nxt(PUSHL) ~= nil then
    for p, es in pairs(PUSHL) do call_multi('RPUSH', level_key(p), es, 1000) end
    PUSHL = {}
  end
  TAIL, TAIL_RUN, TAIL_DIRTY = nil, nil, nil
end

-- push_named stores a new item's TAG_NAMED entry as TAG_EXT (label names
-- to ids, each once) at its priority's level.
local function push_named(e)
  local key, d, a, m = parse_ext(e)
  if m.l ~= '' then
    local ids, seen = {}, {}
    for name in string.gmatch(m.l, '[^,]+') do
      local id = label_id(name)
      if not seen[id] then
        seen[id] = true
        ids[#ids + 1] = id
      end
    end
    m.l = table.concat(ids, '.')
  end
  e = entry(key, d, a, m)
  if m.p > 0 then
    local es = PUSHL[m.p]
    if not es then
      es = {}
      PUSHL[m.p] = es
    end
    es[#es + 1] = e
    level_count(m.p, 1)
  else
    PUSH[#PUSH + 1] = e
  end
  lmove(m, nil, 'pending')
  lmove(m, nil, 'added')
end

-- add_item adds one item unless seen and returns 1 if it was new (the
-- caller counts the new ones: added), else 0. a, b: an ID below 2^40 and
-- '' (bitmap dedup), or a fingerprint's x in hex and its member (as
-- fp_add takes them). e is its pending entry.
local function add_item(a, b, e)
  if b == '' then
    local id = tonum(a)
    if not id_mark(id) then return 0 end
    if e == a then
      push_id(id)
    elseif s_byte(e, 1) == TAG_NAMED then
      push_named(e)
    else
      PUSH[#PUSH + 1] = e
    end
  else
    if not fp_add(tonum(a, 16), b) then return 0 end
    if s_byte(e, 1) == TAG_NAMED then push_named(e) else PUSH[#PUSH + 1] = e end
  end
  return 1
end

-- added counts n new items (add_item's) in pending and added.
local function added(n)
  D.pending = D.pending + n
  D.added = D.added + n
end

-- ---- per-worker statistics (keys.go: w:<worker>) ----

-- A worker's record lives this many lease TTLs after it was last seen.
local WORKER_MEMORY = 10 -- Go: workerMemory
-- Counters of this call per worker, written once each at flush.
local WSTAT = {}

local function worker_count(worker, field, n)
  local w = WSTAT[worker]
  if not w then
    w = {}
    WSTAT[worker] = w
  end
  w[field] = (w[field] or 0) + n
end

-- flush_workers adds the counters to records that still exist: a record
-- gone (expired) is not brought back without its expiry. A count that
-- comes back as exactly what was added may have made the record: one with
-- no expiry (PTTL -1) is that, and goes again; most find their field there
-- and cost one call.
local function flush_workers()
  if nxt(WSTAT) == nil then return end
  for worker, fields in pairs(WSTAT) do
    local k = PREFIX .. 'w:' .. worker
    for f, n in pairs(fields) do
      if rcall('HINCRBY', k, f, itoa(n)) == n and rcall('PTTL', k) == -1 then
        rcall('DEL', k)
        break
      end
    end
  end
  WSTAT = {}
end

-- seen_worker records a checkout or heartbeat of worker with lease ttl (ms)
-- and out leases it got (0 for a heartbeat): its record and its place in
-- the workers zset (score: alive until). Workers silent past their record's
-- life leave the zset, a few per call.
-- Cost: O(log(workers)).
local function seen_worker(worker, ttl, out)
  local k = PREFIX .. 'w:' .. worker
  if rcall('HSET', k, 'seen', ARGV[2]) == 1 then rcall('HSET', k, 'first', ARGV[2]) end -- a new record
  if out > 0 then rcall('HINCRBY', k, 'out', itoa(out)) end
  rcall('PEXPIRE', k, itoa(ttl * WORKER_MEMORY))
  rcall('ZADD', K_WORKERS, itoa(NOW + ttl), worker)
  local old = rcall('ZRANGEBYSCORE', K_WORKERS, '-inf', itoa(NOW - ttl * (WORKER_MEMORY - 1)), 'LIMIT', '0', '8')
  if #old > 0 then rcall('ZREM', K_WORKERS, unpack(old)) end
end

-- requeue_rec puts the lease of token, whose record is rec, back in
-- pending (an expired or dead worker's lease), or in failed once it has
-- used every attempt.
local function requeue_rec(token, rec)
  local key, depth, attempts, worker, meta, hdr = parse_record(rec)
  drop_lease(token, worker)
  worker_count(worker, 'expired', 1)
  if attempts >= MAX_ATTEMPTS then
    to_failed(key, depth, attempts, 'lease expired', meta)
    rv_mark(key, hdr, 0)
  else
    pend(hdr .. entry(key, depth, attempts, meta), meta and meta.p or 0, true)
    lmove(meta, 'leased', 'pending')
  end
end

-- requeue_token requeues the lease of a token with an entry of its own in
-- the zset z (or drops the entry of a lease gone).
local function requeue_token(token, z)
  local rec = rcall('HGET', K_LEASE, token)
  if not rec then
    rcall('ZREM', z, token)
    return 0
  end
  requeue_rec(token, rec)
  return 1
end

-- requeue_group requeues up to limit leases of group g: all of them (all),
-- or those that ride its entry (expired: not the split group's tokens with
-- entries of their own). The group's entry goes once every token was looked
-- at; short of that it stays, due, and the next call goes on. It returns
-- how many it requeued.
local function requeue_group(g, all, limit)
  local gi = rcall('HMGET', K_GROUPS, g .. 'n', g)
  if not gi[1] then -- gone: its leases were all dropped
    rcall('ZREM', K_DEADLINES, g)
    return 0
  end
  local split = not all and tonum(gi[2] or '0') >= SPLIT
  local toks = {}
  for i = 1, tonum(gi[1]) do toks[i] = g .. itoa(i) end
  read_records(toks)
  local n = 0
  for _, tok in ipairs(toks) do
    local rec = REC[tok]
    if rec and not DROPPED[tok] and not (split and rcall('ZSCORE', K_DEADLINES, tok)) then
      if n >= limit then return n end
      requeue_rec(tok, rec)
      n = n + 1
    end
  end
  rcall('ZREM', K_DEADLINES, g)
  return n
end

-- requeue_member requeues up to limit leases of a member of the zset z
-- (deadlines or leases) or of a wl:<worker> set (z: leases, where a token
-- of its has its entry): a group's prefix (its last byte '.') or a token.
local function requeue_member(m, all, limit, z)
  if s_byte(m, -1) == 46 then return requeue_group(m, all, limit) end
  return requeue_token(m, z)
end

-- requeue_expired requeues up to limit expired leases: the groups and
-- tokens of deadlines, then, with legacy, those of leases (a caller that
-- knows leases does not exist skips its read).
local function requeue_expired(limit, legacy)
  local n = 0
  for _, z in ipairs(legacy and {K_DEADLINES, K_LEASES} or {K_DEADLINES}) do
    if n >= limit then break end
    for _, m in ipairs(rcall('ZRANGEBYSCORE', z, '-inf', '(' .. ARGV[2], 'LIMIT', '0', itoa(limit - n))) do
      if n >= limit then break end
      n = n + requeue_member(m, false, limit - n, z)
    end
  end
  return n
end

local function promote_delayed(limit)
  if limit <= 0 then return 0 end
  local due = rcall('ZRANGEBYSCORE', K_DELAYED, '-inf', ARGV[2], 'LIMIT', '0', itoa(limit))
  for _, e in ipairs(due) do
    rcall('ZREM', K_DELAYED, e)
    local p, m = level_of(e)
    pend(e, p, false)
    lmove(m, 'delayed', 'pending')
  end
  D.delayed = D.delayed - #due
  return #due
end

-- ---- the revisit index (keys.go: revisits, rv:<second>) ----
-- Done items due again wait in one list per due second, rv:<s>, of revisit
-- entries (a TAG_REVISIT header, then the entry, attempts 0); the zset
-- revisits orders the seconds (member s, score its ms). '' in a list is an
-- entry a recrawl --match already moved (hash rvgone: second -> how many).
-- stats: revisits counts the entries. Their labels count as done.
local K_REVISITS -- PREFIX .. 'revisits' (begin)

-- revisit files a done item in the index, due at due_ms (rounded up to the
-- second); e is its revisit entry (the header, then the entry, attempts 0).
local function revisit(due_ms, e)
  local sec = math.ceil(due_ms / 1000)
  local s = itoa(sec)
  rcall('RPUSH', PREFIX .. 'rv:' .. s, e)
  rcall('ZADD', K_REVISITS, 'NX', itoa(sec * 1000), s)
  D.revisits = D.revisits + 1
end

-- revisit_pend moves revisit entry e (not '') from the index to pending.
local function revisit_pend(e)
  local p, m = level_of(e)
  pend(e, p, false)
  lmove(m, 'done', 'pending')
  D.revisits = D.revisits - 1
  D.done = D.done - 1
end

-- pop_revisits moves to pending up to limit revisit entries of the seconds
-- scored from lo to hi (ZRANGEBYSCORE bounds), the earliest first: a few
-- calls per second, O(limit). It returns how many entries it took off the
-- lists ('' included) and how many it moved.
local function pop_revisits(lo, hi, limit)
  local popped, moved = 0, 0
  while popped < limit do
    local b = rcall('ZRANGEBYSCORE', K_REVISITS, lo, hi, 'LIMIT', '0', '1')
    if #b == 0 then break end
    local es = rcall('LPOP', PREFIX .. 'rv:' .. b[1], itoa(limit - popped))
    if not es or #es < limit - popped then
      rcall('ZREM', K_REVISITS, b[1])
      rcall('HDEL', PREFIX .. 'rvgone', b[1])
    end
    if es then
      for _, e in ipairs(es) do
        if e ~= '' then
          revisit_pend(e)
          moved = moved + 1
        end
      end
      popped = popped + #es
    end
  end
  return popped, moved
end

-- promote_revisits moves up to limit due revisits to pending.
local function promote_revisits(limit)
  return pop_revisits('-inf', ARGV[2], limit)
end

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

-- ---- the operation ----
