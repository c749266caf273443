-- fail.lua: record failures of held leases: a retryable one goes to delayed
-- until now + delay, a final one (or one that used its last attempt) to failed.
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); then per failure 5 values: token, key, final ('1'|'0'),
--   delay (ms, backoff computed by the caller), reason.
-- Returns the keys of the lost leases.
-- Cost: O(failures × log(delayed)).
local lost = {}
prefetch(6, 5)
for i = 6, #ARGV, 5 do
  local token, key = ARGV[i], ARGV[i + 1]
  local l = held(token, key)
  if l then
    drop_lease(token, l.worker)
    worker_count(l.worker, 'failed', 1)
    if ARGV[i + 2] == '1' or l.attempts >= C.max_attempts then
      to_failed(key, l.depth, l.attempts, ARGV[i + 4], l.meta)
      rv_mark(key, l.hdr, 0)
    else
      rcall('ZADD', K.delayed, itoa(C.now + tonumber(ARGV[i + 3])), l.hdr .. entry(key, l.depth, l.attempts, l.meta))
      C.delta.delayed = C.delta.delayed + 1
      lmove(l.meta, 'leased', 'delayed')
    end
  else
    lost[#lost + 1] = key
  end
end
flush()
return lost
