-- checkout.lua: lease up to n pending items to one worker, from the
-- hosts that are ready now (lua/lib/hosts.lua: their slot came), spread
-- over them, booking each host's next slot (tracker.NextSlot); items
-- without a host come first, never held back. Expired leases and due
-- delayed items are moved back to pending first, and the leases of workers
-- past their heartbeat window (reap_dead) (a bounded number). Each item is
-- moved and its lease record written in this one script, so no item is
-- ever leased without its record.
-- KEYS: the fixed keys (codes.lua); the derived wl:<worker> and paused.
-- ARGV: the common 1-5 (codes.lua); 6 n; 7 ttl (ms); 8 worker; 9 requeue batch; 10 scan
--   budget (range IDs and old entries looked at, at most); 11 the crawl id seen, 12 a fresh id
--   (check_crawl: a crawl seeded before records existed gets one); 13 max
--   pages, 14 max bytes (tracker.Limits, 0 = unlimited); 15 the host
--   interval per egress (ms, tracker.Options.HostInterval; 0 none); 16 the
--   egresses (HostEgress, >= 1); 17 '1' when every live worker is one
--   (HostPerWorker); 18 ... 17+n the n lease tokens (unique: the Go side
--   makes them, a random prefix per call and a counter, where Lua would
--   format each with string.format).
-- Returns {more, crawl id, c, next ready, record1, ..., recordc, then (i, meta) for
--   each lease i with meta (as the library's meta_out writes it, label names
--   for ids)}: each lease's record as written to the lease hash (the library's
--   record: key, depth, attempts and revisit header; Go's parseRecord), one
--   value, where each value is one more the reply conversion pays for. The
--   i-th lease's token is ARGV[17+i]. next ready is, when fewer than n were
--   leased, the slot (ms) of the first host that waits for it, else 0. more is 1 when the scan budget ran
--   out before n items were found (seen IDs of a range were skipped, or
--   entries of a crawl before layout 4 moved to their hosts): call
--   again; 2 when the crawl is paused (no leases; expired leases and due
--   retries still move, the worker is still seen); 3
--   (max pages) or 4 (max bytes) when a limit is reached (no leases, as for
--   2). STATE_LOST when the crawl's state vanished: an empty queue must not
--   pass for a finished crawl. The worker's record (derived w:<worker>,
--   the library's seen_worker) says it was seen and how many leases it got.
-- Hosts: the ready hosts of a level are read ZRANGEBYSCORE -inf now, a
--   batch at a time, and taken in turn: one item each when the host has an
--   interval, else a share of what is left. Priorities: a crawl that used
--   none (levels_used: level 0 alone) takes its items without a plan;
--   otherwise each lease's level is planned as tracker.PlanLevels does,
--   among the levels with an item ready (the highest, or the lowest once
--   tracker.StarveEvery - 1 leases passed it by: stats pskip), and the
--   leases come grouped by level, the highest first.
-- Cost: O(n log hosts + requeue batch + scan budget): LPOP, ZADD and
--   ZRANGEBYSCORE with LIMIT, a few calls per lease, independent of the
--   queue's size.
local ARGV = ARGV -- a register, not the library's upvalue, in the per-item loops
local n = tonum(ARGV[6])
local deadline = itoa(C.now + tonum(ARGV[7]))
local worker = ARGV[8]
local make_record = record_head(worker)
local rq = tonum(ARGV[9])
local budget = tonum(ARGV[10])
local id = check_crawl(ARGV[11], ARGV[12], false)
if not id then return redis.error_reply(STATE_LOST) end

-- What most crawls lack, in one EXISTS: a pause, delayed retries,
-- revisits. Only a crawl with some of them reads each: one EXISTS instead
-- of a call per key.
local some = rcall('EXISTS', K.paused, K.delayed, K.revisits) > 0
requeue_expired(rq)
reap_dead(rq)
if some then
  promote_delayed(rq)
  promote_revisits(math.max(n, rq))
end

local out = {CHECKOUT_DONE, id, 0, 0}
local xs = {} -- (i, meta) of the leases with meta
if some and rcall('EXISTS', K.paused) == 1 then
  out[1] = CHECKOUT_PAUSED
  n = 0
end
-- The limits, as tracker.Limits.Room: at most max pages − done − leased
-- leases (expired ones just requeued are no longer leased: D.leased), none
-- once the bytes done reach max bytes. O(1).
local max_pages, max_bytes = tonum(ARGV[13]), tonum(ARGV[14])
if out[1] == CHECKOUT_DONE and (max_pages > 0 or max_bytes > 0) then
  local c = rcall('HMGET', K.stats, 'done', 'leased', 'bytes')
  local left = max_pages - tonum(c[1] or '0') - tonum(c[2] or '0') - C.delta.leased
  if max_bytes > 0 and tonum(c[3] or '0') >= max_bytes then
    out[1], n = CHECKOUT_MAX_BYTES, 0
  elseif max_pages > 0 and left <= 0 then
    out[1], n = CHECKOUT_MAX_PAGES, 0
  elseif max_pages > 0 then
    n = math.min(n, left)
  end
end
local IV, EGRESS, PER_WORKER = tonum(ARGV[15]), math.max(tonum(ARGV[16]), 1), ARGV[17] == '1'
local TOK = 17 -- the i-th lease's token is ARGV[TOK + i]
local count = 0
local L = {} -- the leases per level, {key, depth, attempts, meta, revisit header}
local HDR = '' -- the revisit header of the entry being leased
local function lease(key, depth, attempts, meta, p)
  count = count + 1
  local t = L[p]
  if not t then
    t = {}
    L[p] = t
  end
  t[#t + 1] = {key, depth, attempts + 1, meta, HDR}
end

local function skipped(k)
  C.delta.pending = C.delta.pending - k
  C.delta.added = C.delta.added - k
end

-- carve leases IDs from a run or range entry, up to count = goal, and
-- returns what is left of it (nil when used up).
local function carve(e, goal)
  local c = s_byte(e, 1)
  if c == TAG_HUGE_RANGE then -- decimal strings, fingerprint dedup
    local lo, hi = s_match(e, '^' .. S_HUGE_RANGE .. '(%d+):(%d+)$')
    while dec_le(lo, hi) and count < goal and budget > 0 do
      budget = budget - 1
      local x, m = fp_huge(lo)
      if fp_add(x, m) then lease(lo, 0, 0, nil, 0) else skipped(1) end
      lo = dec_inc(lo)
    end
    if dec_le(lo, hi) then return S_HUGE_RANGE .. lo .. ':' .. hi end
    return nil
  end
  local lo, hi = s_match(e, '^.(%d+):(%d+)$')
  lo, hi = tonum(lo), tonum(hi)
  if c == TAG_RUN then -- lease as is
    local take = math.min(goal - count, hi - lo + 1)
    for id = lo, lo + take - 1 do lease(itoa(id), 0, 0, nil, 0) end
    lo = lo + take
  else -- range: skip seen IDs a run at a time (BITPOS)
    while lo <= hi and count < goal and budget > 0 do
      budget = budget - 1
      local k, off = id_shard(lo)
      if rcall('GETBIT', k, itoa(off)) == 0 then
        id_mark(lo)
        lease(itoa(lo), 0, 0, nil, 0)
        lo = lo + 1
      else
        local p = rcall('BITPOS', k, '0', itoa(off), itoa(SHARD_BITS - 1), 'BIT')
        if p < 0 then p = SHARD_BITS end -- shards are full size: all seen to its end
        local nxt = math.min(lo - off + p, hi + 1)
        skipped(nxt - lo)
        lo = nxt
      end
    end
  end
  if lo > hi then return nil end
  if c == TAG_RUN and lo == hi then return itoa(lo) end
  return string.char(c) .. itoa(lo) .. ':' .. itoa(hi)
end

-- lease_entry leases one item entry (not a run or range) of level p.
local function lease_entry(e, p)
  HDR = ''
  if s_byte(e, 1) == TAG_REVISIT then HDR, e = split_revisit(e) end
  local c = s_byte(e, 1)
  if c == TAG_ITEM then
    local d, a, q = s_match(e, '^' .. S_ITEM .. '(%d+):(%d+):()')
    lease(s_sub(e, q), tonum(d), tonum(a), nil, p)
  elseif c == TAG_EXT then
    local key, d, a, m = parse_ext(e)
    lease(key, d, a, m, p)
  else
    lease(e, 0, 0, nil, p)
  end
end

-- take leases from the head of list, the entries without a host of level
-- p, until count reaches goal: it reads goal - count entries at a time
-- (LRANGE), leases from them, then drops what was used up (LTRIM) and
-- rewrites a part-carved range (LSET). An entry with a host (written
-- before layout 4) goes to its host's queue instead, one of the budget.
local function take(list, goal, p)
  local before = count
  while count < goal and budget > 0 do
    local es = rcall('LRANGE', list, '0', itoa(goal - count - 1))
    if #es == 0 then break end
    local used, rest = 0, nil
    for _, e in ipairs(es) do
      if count >= goal or budget <= 0 then break end
      local _, body = split_revisit(e)
      local c = s_byte(body, 1)
      if c == TAG_RUN or c == TAG_RANGE or c == TAG_HUGE_RANGE then
        HDR = ''
        rest = carve(body, goal)
        if rest then break end
      else
        local host = entry_host(e)
        if host == '' then
          lease_entry(e, p)
        else
          budget = budget - 1
          if rcall('RPUSH', hq_key(host, p), e) == 1 then host_entered(host, p) end
        end
      end
      used = used + 1
    end
    if used > 0 then rcall('LTRIM', list, itoa(used), '-1') end
    if rest then rcall('LSET', list, '0', rest) end
  end
  level_count(p, before - count)
end

-- The hosts' side. iv is a host's lease interval (ms): the longer of the
-- crawl's and its own, per egress (tracker.Options.HostLeaseInterval).
local pace, alive
local function host_iv(host)
  local iv = IV
  if pace == nil then pace = rcall('EXISTS', crawl_key('host_pace')) == 1 end
  if pace then iv = math.max(iv, tonum(rcall('HGET', crawl_key('host_pace'), host) or '0')) end
  if iv <= 0 then return 0 end
  local e = EGRESS
  if PER_WORKER then
    alive = alive or math.max(rcall('ZCOUNT', K.workers, ARGV[2], '+inf'), 1)
    e = alive
  end
  return math.floor(iv / e)
end

-- R[p] are level p's ready hosts as read ({host, slot}), taken in turn from
-- R[p].i; booked the slots given in this call, gone the (level, host)
-- queues emptied.
local R, booked, gone = {}, {}, {}
local function ready_host(p)
  while true do
    local r = R[p]
    if not r or r.i > #r then
      if r and r.loads >= 3 then return nil end
      local z = rcall('ZRANGEBYSCORE', hz_key(p), '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', '0', itoa(math.max(n - count, 1)))
      local nr = {i = 1, loads = (r and r.loads or 0) + 1}
      for j = 1, #z, 2 do nr[#nr + 1] = {z[j], tonum(z[j + 1])} end
      R[p] = nr
      if #nr == 0 then
        nr.loads = 3
        return nil
      end
      r = nr
    end
    local h = r[r.i]
    local b = booked[h[1]]
    if (b and b > C.now) or gone[p .. ':' .. h[1]] then
      r.i = r.i + 1
    else
      if b then h[2] = b end
      return h
    end
  end
end

-- take_host leases up to k items of the ready host h at level p and books
-- its next slot; the host goes to the end of the turn while still ready.
local function take_host(h, p, k)
  local host = h[1]
  local q = hq_key(host, p)
  local es = rcall('LPOP', q, itoa(k)) or {}
  for _, e in ipairs(es) do lease_entry(e, p) end
  level_count(p, -#es)
  local empty = #es < k or rcall('EXISTS', q) == 0
  local slot = next_slot(h[2], host_iv(host))
  booked[host], h[2] = slot, slot
  local r = R[p]
  r.i = r.i + 1
  local any
  if empty then
    rcall('ZREM', hz_key(p), host)
    gone[p .. ':' .. host] = true
    any = #levels_used() > 1 and host_rebook(host, slot, p)
    if not any and slot > C.now then rcall('ZADD', crawl_key('host_idle'), itoa(slot), host) end
  else
    rcall('ZADD', hz_key(p), itoa(slot), host)
    if #levels_used() > 1 then host_rebook(host, slot, p) end
    if slot <= C.now then r[#r + 1] = h end
  end
end

if n > 0 then
  local lv = levels_used()
  if #lv == 1 then
    -- Level 0 alone: the items without a host, then the ready hosts in
    -- turn, a host with an interval one item at a time.
    take(K.pending, n, 0)
    while count < n do
      local h = ready_host(0)
      if not h then break end
      local k = 1
      if host_iv(h[1]) == 0 then
        local r = R[0]
        k = math.ceil((n - count) / (#r - r.i + 1))
      end
      take_host(h, 0, k)
    end
  else
    -- Each lease's level as tracker.PlanLevels plans it, among the levels
    -- with an item ready.
    local skip0 = tonum(rcall('HGET', K.stats, 'pskip') or '0')
    local skip = skip0
    local hostless = {}
    local function avail(p)
      if hostless[p] == nil then hostless[p] = rcall('LLEN', level_key(p)) > 0 end
      return hostless[p] or ready_host(p) ~= nil
    end
    while count < n and budget > 0 do
      local hi, lo
      for _, p in ipairs(lv) do
        if avail(p) then
          hi = hi or p
          lo = p
        end
      end
      if not hi then break end
      local p = hi
      if lo ~= hi then
        if skip >= STARVE_EVERY - 1 then p, skip = lo, 0 else skip = skip + 1 end
      end
      if hostless[p] then
        take(level_key(p), count + 1, p)
        hostless[p] = nil
      else
        take_host(ready_host(p), p, 1)
      end
    end
    if skip ~= skip0 then rcall('HSET', K.stats, 'pskip', itoa(skip)) end
  end
end
if count < n and budget <= 0 and out[1] == CHECKOUT_DONE then out[1] = CHECKOUT_MORE end

if count > 0 then
  -- The records, the highest level first, and their tokens in that order.
  local recs = {}
  local i = 0
  for p = 9, 0, -1 do
    for _, x in ipairs(L[p] or {}) do
      i = i + 1
      local rec = make_record(x[1], x[2], x[3], x[5])
      local meta = x[4]
      if meta then
        rec = with_meta(rec, meta)
        lmove(meta, 'pending', 'leased')
        xs[#xs + 1], xs[#xs + 2] = i, meta_out(meta)
      end
      recs[2 * i - 1], recs[2 * i] = ARGV[TOK + i], rec
      out[4 + i] = rec
    end
  end
  -- One group (the library's lease groups): its prefix is the first token's
  -- without the counter's '1'.
  local g = s_sub(ARGV[TOK + 1], 1, -2)
  call_multi('HSET', K.lease, recs, 1000)
  rcall('ZADD', K.deadlines, deadline, g)
  rcall('SADD', crawl_key('worker_leases', worker), g)
  rcall('HSET', K.lease_groups, g, itoa(count), g .. 'n', itoa(count))
  C.delta.leased = C.delta.leased + count
  C.delta.pending = C.delta.pending - count
end

do
  -- The next slot of a host that waits (ReadyHint), for the worker's sleep.
  local first
  for _, p in ipairs(levels_used()) do
    local f = rcall('ZRANGEBYSCORE', hz_key(p), '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
    if f[2] and (not first or tonum(f[2]) < first) then first = tonum(f[2]) end
  end
  if first then out[4] = itoa(first) end
end
seen_worker(worker, tonum(ARGV[7]), count)
flush()
out[3] = count
local o = count + 4
for j = 1, #xs do out[o + j] = xs[j] end
return out
