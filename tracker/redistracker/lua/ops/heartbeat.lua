-- heartbeat.lua: say a worker is alive until now + its window, whatever
-- its lease TTL, and hand back the leases of the workers past theirs.
-- KEYS: the fixed keys (codes.lua): lease, workers, stats; the derived hb,
--   dead, w:<worker>, and, for a late worker, its wl:<worker> and the
--   lease keys requeue touches (the library's reap_dead).
-- ARGV: the common 1-5 (codes.lua); 6 worker; 7 its alive window (ms,
--   > 0); 8 leases of dead workers handed back at most.
-- Returns {was dead, dead...}: was dead is 1 when this worker had been
--   declared dead (its leases went back; it is alive again now), else 0;
--   then the workers declared dead and not back, the most recent first
--   (at most MAX_DEAD), forgotten WORKER_MEMORY windows after their death.
-- Cost: O(log(workers) + MAX_DEAD) plus reap_dead's.
local worker, alive = ARGV[6], tonum(ARGV[7])
reap_dead(tonum(ARGV[8]))
local k = crawl_key('worker', worker)
rcall('HSETNX', k, 'first', ARGV[2])
rcall('HSET', k, 'seen', ARGV[2], 'hb', ARGV[7])
local mem = alive * WORKER_MEMORY
if rcall('PTTL', k) < mem then rcall('PEXPIRE', k, itoa(mem)) end
local until_ = itoa(C.now + alive)
rcall('ZADD', K.workers, until_, worker)
rcall('ZADD', crawl_key('heartbeats'), until_, worker)
local dead = crawl_key('dead_workers')
local out = {rcall('ZREM', dead, worker)}
rcall('ZREMRANGEBYSCORE', dead, '-inf', itoa(C.now - mem))
for _, w in ipairs(rcall('ZREVRANGE', dead, '0', itoa(MAX_DEAD - 1))) do out[#out + 1] = w end
flush()
return out
