-- requeue.lua: move back to pending, at most `limit` items: the expired
-- leases, the leases of workers past their heartbeat window (reap_dead)
-- and the due delayed items ('expired'), one worker's leases
-- ('worker'), or the dead letters with their attempts reset ('failed', the
-- oldest first; 'keys', those named in ARGV[8...] that are dead letters). A
-- lease that used its last attempt goes to failed ("lease expired").
-- KEYS: the fixed keys (codes.lua); the derived wl:<worker> ('worker' mode).
-- ARGV: the common 1-5 (codes.lua); 6 mode; 7 limit (> 0); ('worker') 8 the
--   worker; ('failed' with a label) 8 the
--   label, 9 where the scan of the dead letters starts (a rank, 0 first);
--   ('keys') 8... the keys.
-- Returns how many items moved; the caller loops while it gets `limit`. With
--   a label, {moved, next rank to scan or -1 at the end}: the dead letters
--   are scanned SCAN at a time, and the caller loops until -1 (or its limit).
-- Cost: O((limit + a lease group) × log(leases)), O(SCAN) with a label, O(keys) for 'keys':
--   never a scan of the queue.
local mode, limit = ARGV[6], tonumber(ARGV[7])
local n = 0
-- unfail moves dead letter k, out of the failed zset already, to pending
-- with its attempts reset.
local function unfail(k)
  local _, d, _, m = parse_failinfo(rcall('HGET', K.failinfo, k) or '0:0:')
  rcall('HDEL', K.failinfo, k)
  pend(entry(k, d, 0, m), m and m.p or 0, false)
  lmove(m, 'failed', 'pending')
  C.delta.failed = C.delta.failed - 1
  n = n + 1
end
if mode == 'expired' then
  n = requeue_expired(limit)
  n = n + reap_dead(limit - n)
  n = n + promote_delayed(limit - n)
elseif mode == 'worker' then
  -- Its groups' prefixes (the library's lease groups) and any token of its own.
  for _, m in ipairs(rcall('SMEMBERS', crawl_key('worker_leases', ARGV[8]))) do
    if n >= limit then break end
    n = n + requeue_member(m, true, limit - n, K.deadlines)
  end
elseif mode == 'failed' then
  local label = ARGV[8] or ''
  local SCAN = 1000
  local lid, rank, first = nil, tonumber(ARGV[9] or '0'), 0
  if label ~= '' then
    lid = rcall('HGET', K.labels, label)
    if not lid then return {0, -1} end
    first = rank
  end
  local ks = rcall('ZRANGE', K.failed, itoa(first), itoa(first + (lid and SCAN or limit) - 1))
  for _, k in ipairs(ks) do
    if n >= limit then break end
    local m
    if lid then _, _, _, m = parse_failinfo(rcall('HGET', K.failinfo, k) or '0:0:') end
    if lid and not has_label(m, lid) then
      rank = rank + 1 -- kept: the next scan starts after it
    else
      rcall('ZREM', K.failed, k)
      unfail(k)
    end
  end
  if lid then
    flush()
    if #ks < SCAN and n < limit then rank = -1 end
    return {n, rank}
  end
elseif mode == 'keys' then
  for i = 8, #ARGV do
    if n >= limit then break end
    if rcall('ZREM', K.failed, ARGV[i]) == 1 then unfail(ARGV[i]) end
  end
else
  return redis.error_reply('requeue: unknown mode ' .. mode)
end
flush()
return n
