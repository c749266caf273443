-- checkout.lua: lease up to n pending items to one worker. Expired leases
-- and due delayed items are moved back to pending first, and the leases of
-- workers past their heartbeat window (reap_dead) (a bounded number).
-- Each item is moved and its lease record written in this one script, so no
-- item is ever leased without its record.
-- KEYS: the fixed keys (codes.lua); the derived wl:<worker> and paused.
-- ARGV: the common 1-5 (codes.lua); 6 n; 7 ttl (ms); 8 worker; 9 requeue batch; 10 scan
--   budget (range IDs looked at, at most); 11 the crawl id seen, 12 a fresh id
--   (check_crawl: a crawl seeded before records existed gets one); 13 max
--   pages, 14 max bytes (tracker.Limits, 0 = unlimited); 15 ... 14+n the n
--   lease tokens (unique: the Go side makes them, a random prefix per call
--   and a counter, where Lua would format each with string.format).
-- Returns {more, crawl id, c, record1, ..., recordc, then (i, meta) for
--   each lease i with meta (as the library's meta_out writes it, label names
--   for ids)}: each lease's record as written to the lease hash (the library's
--   record: key, depth, attempts and revisit header; Go's parseRecord), one
--   value, where each value is one more the reply conversion pays for. The
--   i-th lease's token is ARGV[14+i]. more is 1 when the scan budget ran
--   out before n items were found (seen IDs of a range were skipped): call
--   again; 2 when the crawl is paused (no leases; expired leases and due
--   retries still move, the worker is still seen); 3
--   (max pages) or 4 (max bytes) when a limit is reached (no leases, as for
--   2). STATE_LOST when the crawl's state vanished: an empty queue must not
--   pass for a finished crawl. The worker's record (derived w:<worker>,
--   the library's seen_worker) says it was seen and how many leases it got.
-- Priorities: the counts of levels 1..9 (stats p1..p9) and the starvation
--   guard's count (pskip) are read in one HMGET; the batch is planned from
--   them as tracker.PlanLevels does (the highest non-empty level first, every
--   tracker.StarveEvery-th lease from the lowest), then taken level by level.
--   While no level list exists (the EXISTS below), checkout takes from
--   pending without reading them.
-- Cost: O(n + requeue batch + scan budget); independent of the queue's size
--   (LRANGE/LTRIM/LSET at the head, ZRANGEBYSCORE with LIMIT, one HMGET of
--   the level counts), and a few calls per batch and level, not per item.
local ARGV = ARGV -- a register, not the library's upvalue, in the per-item loops
local n = tonum(ARGV[6])
local deadline = itoa(C.now + tonum(ARGV[7]))
local worker = ARGV[8]
local make_record = record_head(worker)
local rq = tonum(ARGV[9])
local budget = tonum(ARGV[10])
local id = check_crawl(ARGV[11], ARGV[12], false)
if not id then return redis.error_reply(STATE_LOST) end

-- What most crawls lack, in one EXISTS: a pause, delayed retries, revisits,
-- priority levels 1-9. Only a crawl with some of them reads each: one
-- EXISTS instead of a call per key.
local some = rcall('EXISTS', K.paused, K.delayed, K.revisits, level_key(1), level_key(2),
  level_key(3), level_key(4), level_key(5), level_key(6), level_key(7), level_key(8), level_key(9)) > 0
requeue_expired(rq)
reap_dead(rq)
if some then
  promote_delayed(rq)
  promote_revisits(math.max(n, rq))
end

local out = {CHECKOUT_DONE, id, 0}
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
local count = 0
local recs = {}
local HDR = '' -- the revisit header of the entry being leased
local function lease(key, depth, attempts, meta)
  count = count + 1
  local token = ARGV[14 + count]
  attempts = attempts + 1
  local rec = make_record(key, depth, attempts, HDR)
  if meta then
    rec = with_meta(rec, meta)
    lmove(meta, 'pending', 'leased')
    local x = #xs
    xs[x + 1], xs[x + 2] = count, meta_out(meta)
  end
  recs[2 * count - 1], recs[2 * count] = token, rec
  out[3 + count] = rec
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
      if fp_add(x, m) then lease(lo, 0, 0) else skipped(1) end
      lo = dec_inc(lo)
    end
    if dec_le(lo, hi) then return S_HUGE_RANGE .. lo .. ':' .. hi end
    return nil
  end
  local lo, hi = s_match(e, '^.(%d+):(%d+)$')
  lo, hi = tonum(lo), tonum(hi)
  if c == TAG_RUN then -- lease as is
    local take = math.min(goal - count, hi - lo + 1)
    for id = lo, lo + take - 1 do lease(itoa(id), 0, 0) end
    lo = lo + take
  else -- range: skip seen IDs a run at a time (BITPOS)
    while lo <= hi and count < goal and budget > 0 do
      budget = budget - 1
      local k, off = id_shard(lo)
      if rcall('GETBIT', k, itoa(off)) == 0 then
        id_mark(lo)
        lease(itoa(lo), 0, 0)
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

-- take leases from the head of list until count reaches goal: it reads
-- goal - count entries at a time (LRANGE), leases from them, then drops what
-- was used up (LTRIM) and rewrites a part-carved range (LSET).
local function take(list, goal)
  while count < goal and budget > 0 do
    local es = rcall('LRANGE', list, '0', itoa(goal - count - 1))
    if #es == 0 then break end
    local used, rest = 0, nil
    for _, e in ipairs(es) do
      if count >= goal or budget <= 0 then break end
      HDR = ''
      local c = s_byte(e, 1)
      if c == TAG_REVISIT then
        HDR, e = split_revisit(e)
        c = s_byte(e, 1)
      end
      if c == TAG_RUN or c == TAG_RANGE or c == TAG_HUGE_RANGE then
        rest = carve(e, goal)
        if rest then break end
      elseif c == TAG_ITEM then
        local d, a, p = s_match(e, '^' .. S_ITEM .. '(%d+):(%d+):()')
        lease(s_sub(e, p), tonum(d), tonum(a))
      elseif c == TAG_EXT then
        lease(parse_ext(e))
      else
        lease(e, 0, 0)
      end
      used = used + 1
    end
    if used > 0 then rcall('LTRIM', list, itoa(used), '-1') end
    if rest then rcall('LSET', list, '0', rest) end
  end
end

if n > 0 and not some and nxt(C.level_delta) == nil then
  take(K.pending, n) -- no level list, none made by the requeue above
elseif n > 0 then
  local c = rcall('HMGET', K.stats, 'pending', 'pskip', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9')
  -- A crawl that never used a priority has none of the fields: one pass
  -- over nils, and the plain path.
  local used = nxt(C.level_delta) ~= nil
  for p = 3, 11 do
    if used then break end
    used = c[p] ~= false
  end
  local counts, above = {}, 0
  if used then
    for p = 1, 9 do
      counts[p] = math.max(0, tonum(c[p + 2] or '0') + (C.level_delta[P_FIELDS[p]] or 0))
      above = above + counts[p]
    end
  end
  if above == 0 then
    take(K.pending, n)
  else
    counts[0] = math.max(0, tonum(c[1] or '0') + C.delta.pending - above)
    -- The plan, as tracker.PlanLevels: per lease, the highest non-empty
    -- level, or the lowest once STARVE_EVERY - 1 leases passed it by.
    local skip0 = tonum(c[2] or '0')
    local skip, want = skip0, {}
    for _ = 1, n do
      local hi, lo
      for p = 9, 0, -1 do
        if counts[p] > 0 then
          hi = hi or p
          lo = p
        end
      end
      if not hi then break end
      local p = hi
      if lo ~= hi then
        if skip >= STARVE_EVERY - 1 then p, skip = lo, 0 else skip = skip + 1 end
      end
      counts[p] = counts[p] - 1
      want[p] = (want[p] or 0) + 1
    end
    for p = 9, 0, -1 do
      if want[p] then
        local before = count
        take(level_key(p), count + want[p])
        level_count(p, before - count)
      end
    end
    if skip ~= skip0 then rcall('HSET', K.stats, 'pskip', itoa(skip)) end
  end
end
if count < n and budget <= 0 and out[1] == CHECKOUT_DONE then out[1] = CHECKOUT_MORE end

if count > 0 then
  -- One group (the library's lease groups): its prefix is the first token's
  -- without the counter's '1'.
  local g = s_sub(ARGV[15], 1, -2)
  call_multi('HSET', K.lease, recs, 1000)
  rcall('ZADD', K.deadlines, deadline, g)
  rcall('SADD', crawl_key('worker_leases', worker), g)
  rcall('HSET', K.lease_groups, g, itoa(count), g .. 'n', itoa(count))
  C.delta.leased = C.delta.leased + count
  C.delta.pending = C.delta.pending - count
end

seen_worker(worker, tonum(ARGV[7]), count)
flush()
out[3] = count
local o = count + 3
for j = 1, #xs do out[o + j] = xs[j] end
return out
