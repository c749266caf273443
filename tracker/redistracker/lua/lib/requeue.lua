-- requeue_rec puts the lease of token, whose record is rec, back in
-- pending (an expired or dead worker's lease), or in failed once it has
-- used every attempt.
local function requeue_rec(token, rec)
  local key, depth, attempts, worker, meta, hdr = parse_record(rec)
  drop_lease(token, worker)
  worker_count(worker, 'expired', 1)
  if attempts >= C.max_attempts then
    to_failed(key, depth, attempts, 'lease expired', meta)
    rv_mark(key, hdr, 0)
  else
    pend(hdr .. entry(key, depth, attempts, meta), meta and meta.p or 0, true)
    lmove(meta, 'leased', 'pending')
  end
end

-- requeue_token requeues the lease of a token with an entry of its own in
-- the zset z (or drops the entry of a lease gone).
local function requeue_token(token, z)
  local rec = rcall('HGET', K.lease, token)
  if not rec then
    rcall('ZREM', z, token)
    return 0
  end
  requeue_rec(token, rec)
  return 1
end

-- requeue_group requeues up to limit leases of group g: all of them (all),
-- or those that ride its entry (expired: not the split group's tokens with
-- entries of their own). The group's entry goes once every token was looked
-- at; short of that it stays, due, and the next call goes on. It returns
-- how many it requeued.
local function requeue_group(g, all, limit)
  local gi = rcall('HMGET', K.lease_groups, g .. 'n', g)
  if not gi[1] then -- gone: its leases were all dropped
    rcall('ZREM', K.deadlines, g)
    return 0
  end
  local split = not all and tonum(gi[2] or '0') >= SPLIT
  local toks = {}
  for i = 1, tonum(gi[1]) do toks[i] = g .. itoa(i) end
  read_records(toks)
  local n = 0
  for _, tok in ipairs(toks) do
    local rec = C.records[tok]
    if rec and not C.dropped[tok] and not (split and rcall('ZSCORE', K.deadlines, tok)) then
      if n >= limit then return n end
      requeue_rec(tok, rec)
      n = n + 1
    end
  end
  rcall('ZREM', K.deadlines, g)
  return n
end

-- requeue_member requeues up to limit leases of a member of the zset z
-- (deadlines or leases) or of a wl:<worker> set (z: leases, where a token
-- of its has its entry): a group's prefix (its last byte '.') or a token.
local function requeue_member(m, all, limit, z)
  if s_byte(m, -1) == 46 then return requeue_group(m, all, limit) end
  return requeue_token(m, z)
end

-- requeue_expired requeues up to limit expired leases: the groups and
-- tokens of deadlines.
local function requeue_expired(limit)
  local n = 0
  for _, m in ipairs(rcall('ZRANGEBYSCORE', K.deadlines, '-inf', '(' .. ARGV[2], 'LIMIT', '0', itoa(limit))) do
    if n >= limit then break end
    n = n + requeue_member(m, false, limit - n, K.deadlines)
  end
  return n
end

-- hand_back requeues up to limit leases of worker (every lease of its
-- wl set, deadlines or not) and returns how many, and whether it holds
-- none now.
local function hand_back(worker, limit)
  local n = 0
  for _, m in ipairs(rcall('SMEMBERS', crawl_key('worker_leases', worker))) do
    if n >= limit then return n, false end
    n = n + requeue_member(m, true, limit - n, K.deadlines)
  end
  return n, n < limit
end

-- reap_dead hands back the leases of the heartbeating workers past their
-- window (hb), up to limit leases, and declares each dead (dead) once it
-- holds none: a killed worker's leases go back within a heartbeat window,
-- not a lease TTL. A worker that comes back finds its leases lost
-- (fencing: their tokens are gone) and is told so by its next heartbeat.
-- Cost: one ZRANGEBYSCORE when no worker is late; O(limit) otherwise.
local function reap_dead(limit)
  local hb = crawl_key('heartbeats')
  local n = 0
  for _, w in ipairs(rcall('ZRANGEBYSCORE', hb, '-inf', '(' .. ARGV[2], 'LIMIT', '0', '4')) do
    local k, all = hand_back(w, limit - n)
    n = n + k
    if not all then return n end
    rcall('ZREM', hb, w)
    rcall('ZADD', crawl_key('dead_workers'), ARGV[2], w)
  end
  return n
end

local function promote_delayed(limit)
  if limit <= 0 then return 0 end
  local due = rcall('ZRANGEBYSCORE', K.delayed, '-inf', ARGV[2], 'LIMIT', '0', itoa(limit))
  for _, e in ipairs(due) do
    rcall('ZREM', K.delayed, e)
    local p, m = level_of(e)
    pend(e, p, false)
    lmove(m, 'delayed', 'pending')
  end
  C.delta.delayed = C.delta.delayed - #due
  return #due
end
