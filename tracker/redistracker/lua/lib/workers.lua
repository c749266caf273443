-- ---- per-worker statistics (keys.go: w:<worker>) ----

-- A worker's record lives this many lease TTLs after it was last seen.
local WORKER_MEMORY = 10 -- Go: workerMemory

-- The dead workers a heartbeat lists, at most.
local MAX_DEAD = 16 -- Go: maxDeadListed

local function worker_count(worker, field, n)
  local w = C.worker_delta[worker]
  if not w then
    w = {}
    C.worker_delta[worker] = w
  end
  w[field] = (w[field] or 0) + n
end

-- flush_workers adds the counters to records that still exist: a record
-- gone (expired) is not brought back without its expiry. A count that
-- comes back as exactly what was added may have made the record: one with
-- no expiry (PTTL -1) is that, and goes again; most find their field there
-- and cost one call.
local function flush_workers()
  if nxt(C.worker_delta) == nil then return end
  for worker, fields in pairs(C.worker_delta) do
    local k = crawl_key('worker', worker)
    for f, n in pairs(fields) do
      if rcall('HINCRBY', k, f, itoa(n)) == n and rcall('PTTL', k) == -1 then
        rcall('DEL', k)
        break
      end
    end
  end
  C.worker_delta = {}
end

-- seen_worker records a checkout or extend of worker with lease ttl (ms)
-- and out leases it got (0 for an extend): its record, and for a worker
-- that sends no heartbeat its place in the workers zset (score: alive
-- until now + ttl); a worker with a heartbeat window (hb) lives by its
-- heartbeats only (heartbeat.lua). Workers silent past their record's life
-- leave the zset, a few per call.
-- Cost: O(log(workers)).
local function seen_worker(worker, ttl, out)
  local k = crawl_key('worker', worker)
  if rcall('HSET', k, 'seen', ARGV[2]) == 1 then rcall('HSET', k, 'first', ARGV[2]) end -- a new record
  if out > 0 then rcall('HINCRBY', k, 'out', itoa(out)) end
  rcall('PEXPIRE', k, itoa(ttl * WORKER_MEMORY))
  if not rcall('HGET', k, 'hb') then rcall('ZADD', K.workers, itoa(C.now + ttl), worker) end
  local old = rcall('ZRANGEBYSCORE', K.workers, '-inf', itoa(C.now - ttl * (WORKER_MEMORY - 1)), 'LIMIT', '0', '8')
  if #old > 0 then rcall('ZREM', K.workers, unpack(old)) end
end
