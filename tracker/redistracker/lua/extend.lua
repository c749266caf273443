-- extend.lua: push the deadline of held leases to now + ttl.
-- KEYS: 2 leases, 3 lease, 4 workers; the derived w:<worker> of the
--   leases' workers (their records, lib.lua's seen_worker).
-- ARGV: lib.lua's 1-5; 6 ttl (ms); then pairs (token, key).
-- Returns one flag per pair: 1 extended, 0 lost.
-- Cost: O(leases + their workers × log(workers)).
local deadline = itoa(NOW + tonumber(ARGV[6]))
local res, zargs, workers = {}, {}, {}
prefetch(7, 2)
for i = 7, #ARGV, 2 do
  local l = held(ARGV[i], ARGV[i + 1])
  if l then
    zargs[#zargs + 1] = deadline
    zargs[#zargs + 1] = ARGV[i]
    workers[l.worker] = true
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
for c = 1, #zargs, 1000 do
  redis.call('ZADD', K_LEASES, 'XX', unpack(zargs, c, math.min(c + 999, #zargs)))
end
for w in pairs(workers) do seen_worker(w, tonumber(ARGV[6])) end
return res
