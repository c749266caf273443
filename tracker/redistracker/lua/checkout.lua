-- checkout.lua: lease up to n pending items to one worker. Expired leases
-- and due delayed items are moved back to pending first (a bounded number).
-- Each item is moved and its lease record written in this one script, so no
-- item is ever leased without its record.
-- KEYS: lib.lua's 1-10; KEYS[11] wl:<worker>; KEYS[12] paused.
-- ARGV: lib.lua's 1-5; 6 n; 7 ttl (ms); 8 worker; 9 requeue batch; 10 scan
--   budget (range IDs looked at, at most); 11 the crawl id seen, 12 a fresh id
--   (check_crawl: a crawl seeded before records existed gets one); 13 max
--   pages, 14 max bytes (tracker.Limits, 0 = unlimited); 15 ... 14+n the n
--   lease tokens (unique: the Go side makes them, a random prefix per call
--   and a counter, where Lua would format each with string.format).
-- Returns {more, crawl id, key1, depth1, attempts1, ...}, the i-th lease's
--   token is ARGV[14+i]; more is 1 when the scan budget ran out before n items were found (seen IDs of a
--   range were skipped): call again; 2 when the crawl is paused (no leases;
--   expired leases and due retries still move, the worker is still seen); 3
--   (max pages) or 4 (max bytes) when a limit is reached (no leases, as for
--   2). STATE_LOST when the crawl's state vanished: an empty queue must not
--   pass for a finished crawl. The worker's record (derived w:<worker>,
--   lib.lua's seen_worker) says it was seen and how many leases it got.
-- Cost: O(n + requeue batch + scan budget); independent of the queue's size
--   (LRANGE/LTRIM/LSET at the head, ZRANGEBYSCORE with LIMIT), and a few
--   calls per batch, not per item.
local n = tonumber(ARGV[6])
local deadline = itoa(NOW + tonumber(ARGV[7]))
local worker = ARGV[8]
local make_record = record_head(worker)
local rq = tonumber(ARGV[9])
local budget = tonumber(ARGV[10])
local id = check_crawl(ARGV[11], ARGV[12], false)
if not id then return redis.error_reply(STATE_LOST) end

requeue_expired(rq)
promote_delayed(rq)

local out = {0, id}
if redis.call('EXISTS', KEYS[12]) == 1 then
  out[1] = 2
  n = 0
end
-- The limits, as tracker.Limits.Room: at most max pages − done − leased
-- leases (expired ones just requeued are no longer leased: D.leased), none
-- once the bytes done reach max bytes. O(1).
local max_pages, max_bytes = tonumber(ARGV[13]), tonumber(ARGV[14])
if out[1] == 0 and (max_pages > 0 or max_bytes > 0) then
  local c = redis.call('HMGET', K_STATS, 'done', 'leased', 'bytes')
  local left = max_pages - tonumber(c[1] or '0') - tonumber(c[2] or '0') - D.leased
  if max_bytes > 0 and tonumber(c[3] or '0') >= max_bytes then
    out[1], n = 4, 0
  elseif max_pages > 0 and left <= 0 then
    out[1], n = 3, 0
  elseif max_pages > 0 then
    n = math.min(n, left)
  end
end
local count = 0
local recs, zargs, toks = {}, {}, {}
local function lease(key, depth, attempts)
  count = count + 1
  local token = ARGV[14 + count]
  attempts = attempts + 1
  local r = 2 * count
  recs[r - 1] = token
  recs[r] = make_record(key, depth, attempts)
  zargs[r - 1] = deadline
  zargs[r] = token
  toks[count] = token
  r = 3 * count
  out[r] = key
  out[r + 1] = depth
  out[r + 2] = attempts
end

local function skipped(k)
  D.pending = D.pending - k
  D.added = D.added - k
end

-- carve leases IDs from a run or range entry and returns what is left of
-- it (nil when used up).
local function carve(e)
  local c = string.byte(e, 1)
  if c == TAG_HUGE_RANGE then -- decimal strings, fingerprint dedup
    local lo, hi = string.match(e, '^' .. S_HUGE_RANGE .. '(%d+):(%d+)$')
    while dec_le(lo, hi) and count < n and budget > 0 do
      budget = budget - 1
      local x, m = fp_huge(lo)
      if fp_add(x, m) then lease(lo, 0, 0) else skipped(1) end
      lo = dec_inc(lo)
    end
    if dec_le(lo, hi) then return S_HUGE_RANGE .. lo .. ':' .. hi end
    return nil
  end
  local lo, hi = string.match(e, '^.(%d+):(%d+)$')
  lo, hi = tonumber(lo), tonumber(hi)
  if c == TAG_RUN then -- lease as is
    local take = math.min(n - count, hi - lo + 1)
    for id = lo, lo + take - 1 do lease(itoa(id), 0, 0) end
    lo = lo + take
  else -- range: skip seen IDs a run at a time (BITPOS)
    while lo <= hi and count < n and budget > 0 do
      budget = budget - 1
      local k, off = id_shard(lo)
      if redis.call('GETBIT', k, off) == 0 then
        id_mark(lo)
        lease(itoa(lo), 0, 0)
        lo = lo + 1
      else
        local p = redis.call('BITPOS', k, 0, off, SHARD_BITS - 1, 'BIT')
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

-- Read the head of the queue n entries at a time (LRANGE), lease from it,
-- then drop what was used up (LTRIM) and rewrite a part-carved range (LSET).
while count < n and budget > 0 do
  local es = redis.call('LRANGE', K_PENDING, 0, n - count - 1)
  if #es == 0 then break end
  local used, rest = 0, nil
  for _, e in ipairs(es) do
    if count >= n or budget <= 0 then break end
    local c = string.byte(e, 1)
    if c == TAG_RUN or c == TAG_RANGE or c == TAG_HUGE_RANGE then
      rest = carve(e)
      if rest then break end
    elseif c == TAG_ITEM then
      local d, a, p = string.match(e, '^' .. S_ITEM .. '(%d+):(%d+):()')
      lease(string.sub(e, p), tonumber(d), tonumber(a))
    else
      lease(e, 0, 0)
    end
    used = used + 1
  end
  if used > 0 then redis.call('LTRIM', K_PENDING, used, -1) end
  if rest then redis.call('LSET', K_PENDING, 0, rest) end
end
if count < n and budget <= 0 and out[1] == 0 then out[1] = 1 end

if count > 0 then
  call_multi('HSET', K_LEASE, recs, 1000)
  call_multi('ZADD', K_LEASES, zargs, 1000)
  call_multi('SADD', KEYS[11], toks, 1000)
  D.leased = D.leased + count
  D.pending = D.pending - count
end

seen_worker(worker, tonumber(ARGV[7]))
if count > 0 then worker_count(worker, 'out', count) end
flush()
return out
