-- ---- lease groups ----
-- The leases of one checkout call form a group: their tokens are the call's
-- prefix (TOKEN_PREFIX bytes, ending in '.') and a counter 1..n. The zset
-- deadlines and the worker's set wl:<worker> hold the group once, its
-- prefix, instead of every token: a member and a score per item were the
-- largest part of the Redis cost of a lease. The derived hash lg keeps, per
-- group g, its live leases (field g), plus SPLIT once Extend gave some of
-- them a deadline of their own (one field read and counted down in one
-- HINCRBY), and its size (g..'n'). Invariant: every live lease's record is
-- found from deadlines, through its own token (extended apart from its
-- group) or through its group's prefix, or from leases (a token leased by
-- the scripts before groups); requeue_group skips the tokens with their own
-- entry while the group is split.
-- Groups live in a zset of their own, not in leases, so that a worker still
-- running the scripts before groups, in a fleet being upgraded, never sees
-- one: its reaper would take a group's prefix for a token without a record
-- and drop the entry, and with it the group's leases. Such a worker reaps
-- and requeues its own leases only; these scripts handle both.
local TOKEN_PREFIX = 17 -- Go: tokenPrefixLen (16 hex digits and '.')
local SPLIT = 1099511627776 -- Go: groupSplit (2^40, far above any group's size)
local K_GROUPS, K_DEADLINES -- PREFIX .. 'lg', 'deadlines' (begin)

-- group_of is the group prefix of a token.
local function group_of(token) return s_sub(token, 1, TOKEN_PREFIX) end

-- Lease deletions are collected and written in one call per key at flush.
local DROP_TOKENS, DROP_BY_GROUP = {}, {}

-- drop_lease drops the lease of token, of worker's group g (group_of(token)
-- when nil).
local function drop_lease(token, worker, g)
  DROPPED[token] = true
  DROP_TOKENS[#DROP_TOKENS + 1] = token
  g = g or group_of(token)
  local d = DROP_BY_GROUP[g]
  if not d then
    d = {worker = worker}
    DROP_BY_GROUP[g] = d
  end
  d[#d + 1] = token
  D.leased = D.leased - 1
end

-- group_done forgets group g of worker, all its leases gone.
local function group_done(g, worker)
  rcall('ZREM', K_DEADLINES, g)
  rcall('SREM', PREFIX .. 'wl:' .. worker, g)
  rcall('HDEL', K_GROUPS, g, g .. 'n')
end

-- flush_drops deletes the dropped leases' records and counts them out of
-- their groups: a few calls per group, none per lease unless the group is
-- split (its own entries go) or its leases predate groups (per token).
local function flush_drops()
  if #DROP_TOKENS == 0 then return end
  call_multi('HDEL', K_LEASE, DROP_TOKENS, 1000)
  for g, toks in pairs(DROP_BY_GROUP) do
    local live = rcall('HINCRBY', K_GROUPS, g, itoa(-#toks))
    if live < 0 then -- no such group: leases of tokens of their own
      rcall('HDEL', K_GROUPS, g)
      call_multi('ZREM', K_LEASES, toks, 1000)
      call_multi('SREM', PREFIX .. 'wl:' .. toks.worker, toks, 1000)
    else
      if live >= SPLIT then -- split: the dropped may have entries of their own
        live = live - SPLIT
        call_multi('ZREM', K_DEADLINES, toks, 1000)
      end
      if live == 0 then group_done(g, toks.worker) end
    end
  end
  DROP_TOKENS, DROP_BY_GROUP = {}, {}
end

-- to_failed puts a leased item in failed.
local function to_failed(key, depth, attempts, reason, meta)
  rcall('ZADD', K_FAILED, ARGV[2], key)
  rcall('HSET', K_FAILINFO, key, with_meta(itoa(attempts) .. ':' .. itoa(depth) .. ':' .. reason, meta))
  D.failed = D.failed + 1
  lmove(meta, 'leased', 'failed')
end

-- parse_failinfo returns attempts, depth, reason and meta (or nil).
local function parse_failinfo(info)
  local v, m = split_meta(info)
  local a, d, p = s_match(v, '^(%d+):(%d+):()')
  return tonum(a) or 0, tonum(d) or 0, p and s_sub(v, p) or '', m
end
