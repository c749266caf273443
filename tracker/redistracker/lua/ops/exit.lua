-- exit.lua: record that a worker ended cleanly (finished or stopped), so it
-- is listed as such and never as dead, and hand back what it still holds.
-- KEYS: the fixed keys (codes.lua): lease, workers, stats; the derived hb,
--   dead, w:<worker>, wl:<worker> and the lease keys requeue touches.
-- ARGV: the common 1-5 (codes.lua); 6 worker; 7 how ('finished' or
--   'stopped', tracker.WorkerExit); 8 leases handed back at most; 9 the
--   life (ms) of a record this call makes (one that exists keeps its own).
-- Returns how many leases it handed back: the caller calls again while it
--   gets ARGV[8].
-- Cost: O(ARGV[8] + log(workers)).
local worker = ARGV[6]
local n = hand_back(worker, tonum(ARGV[8]))
local k = crawl_key('worker', worker)
rcall('HSETNX', k, 'first', ARGV[2])
rcall('HSET', k, 'exit', ARGV[7], 'exited', ARGV[2])
if rcall('PTTL', k) < 0 then rcall('PEXPIRE', k, ARGV[9]) end
rcall('ZADD', K.workers, ARGV[2], worker)
rcall('ZREM', crawl_key('heartbeats'), worker)
rcall('ZREM', crawl_key('dead_workers'), worker)
flush()
return n
