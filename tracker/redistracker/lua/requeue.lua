-- requeue.lua: move back to pending, at most `limit` items: the expired
-- leases and the due delayed items ('expired'), one worker's leases
-- ('worker'), or the dead letters with their attempts reset ('failed'). A
-- lease that used its last attempt goes to failed ("lease expired").
-- KEYS: lib.lua's 1-10; KEYS[11] wl:<worker> ('worker' mode).
-- ARGV: lib.lua's 1-5; 6 mode; 7 limit (> 0).
-- Returns how many items moved. The caller loops while it gets `limit`.
-- Cost: O(limit × log(leases)): never a scan of the queue.
local mode, limit = ARGV[6], tonumber(ARGV[7])
local n = 0
if mode == 'expired' then
  n = requeue_expired(limit)
  n = n + promote_delayed(limit - n)
elseif mode == 'worker' then
  local toks = redis.call('SMEMBERS', KEYS[11])
  for i = 1, math.min(limit, #toks) do n = n + requeue_token(toks[i]) end
elseif mode == 'failed' then
  for _, k in ipairs(redis.call('ZRANGE', K_FAILED, 0, limit - 1)) do
    local info = redis.call('HGET', K_FAILINFO, k) or '0:0:'
    local _, d = string.match(info, '^(%d+):(%d+):')
    redis.call('ZREM', K_FAILED, k)
    redis.call('HDEL', K_FAILINFO, k)
    redis.call('RPUSH', K_PENDING, entry(k, tonumber(d), 0))
    D.failed = D.failed - 1
    D.pending = D.pending + 1
    n = n + 1
  end
else
  return redis.error_reply('requeue: unknown mode ' .. mode)
end
flush()
return n
