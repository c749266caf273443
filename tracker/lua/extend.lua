-- extend.lua: push the deadline of held leases to now + ttl.
-- KEYS: 2 leases, 3 lease, 4 workers.
-- ARGV: lib.lua's 1-5; 6 ttl (ms); then pairs (token, key).
-- Returns one flag per pair: 1 extended, 0 lost.
-- Cost: O(leases).
local deadline = itoa(NOW + tonumber(ARGV[6]))
local res = {}
for i = 7, #ARGV, 2 do
  local l = held(ARGV[i], ARGV[i + 1])
  if l then
    redis.call('ZADD', K_LEASES, 'XX', deadline, ARGV[i])
    redis.call('ZADD', K_WORKERS, deadline, l.worker)
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
return res
