-- ---- lease groups ----
-- The leases of one checkout call form a group: their tokens are the call's
-- prefix (TOKEN_PREFIX bytes, ending in '.') and a counter 1..n. The zset
-- deadlines and the worker's set wl:<worker> hold the group once, its
-- prefix, instead of every token, so a lease costs no member and score of
-- its own. The derived hash lg keeps, per
-- group g, its live leases (field g), plus SPLIT once Extend gave some of
-- them a deadline of their own (one field read and counted down in one
-- HINCRBY), and its size (g..'n'). Invariant: every live lease's record is
-- found from deadlines, through its own token (extended apart from its
-- group) or through its group's prefix; requeue_group skips the tokens
-- with their own entry while the group is split. A token in deadlines with
-- no group in lg (layout 1's leases, migrations.go) is a lease of its own.
local TOKEN_PREFIX = 17 -- Go: tokenPrefixLen (16 hex digits and '.')
local SPLIT = 1099511627776 -- Go: groupSplit (2^40, far above any group's size)

-- group_of is the group prefix of a token.
local function group_of(token) return s_sub(token, 1, TOKEN_PREFIX) end

-- drop_lease drops the lease of token, of worker's group g (group_of(token)
-- when nil).
local function drop_lease(token, worker, g)
  C.dropped[token] = true
  C.drop_tokens[#C.drop_tokens + 1] = token
  g = g or group_of(token)
  local d = C.drop_by_group[g]
  if not d then
    d = {worker = worker}
    C.drop_by_group[g] = d
  end
  d[#d + 1] = token
  C.delta.leased = C.delta.leased - 1
end

-- group_done forgets group g of worker, all its leases gone.
local function group_done(g, worker)
  rcall('ZREM', K.deadlines, g)
  rcall('SREM', crawl_key('worker_leases', worker), g)
  rcall('HDEL', K.lease_groups, g, g .. 'n')
end

-- flush_drops deletes the dropped leases' records and counts them out of
-- their groups: a few calls per group, none per lease unless the group is
-- split (its own entries go) or its leases predate groups (per token).
local function flush_drops()
  if #C.drop_tokens == 0 then return end
  call_multi('HDEL', K.lease, C.drop_tokens, 1000)
  for g, toks in pairs(C.drop_by_group) do
    local live = rcall('HINCRBY', K.lease_groups, g, itoa(-#toks))
    if live < 0 then -- no such group: leases of tokens of their own
      rcall('HDEL', K.lease_groups, g)
      call_multi('ZREM', K.deadlines, toks, 1000)
      call_multi('SREM', crawl_key('worker_leases', toks.worker), toks, 1000)
    else
      if live >= SPLIT then -- split: the dropped may have entries of their own
        live = live - SPLIT
        call_multi('ZREM', K.deadlines, toks, 1000)
      end
      if live == 0 then group_done(g, toks.worker) end
    end
  end
  C.drop_tokens, C.drop_by_group = {}, {}
end

-- to_failed puts a leased item in failed.
local function to_failed(key, depth, attempts, reason, meta)
  rcall('ZADD', K.failed, ARGV[2], key)
  rcall('HSET', K.failinfo, key, with_meta(itoa(attempts) .. ':' .. itoa(depth) .. ':' .. reason, meta))
  C.delta.failed = C.delta.failed + 1
  lmove(meta, 'leased', 'failed')
end

-- parse_failinfo returns attempts, depth, reason and meta (or nil).
local function parse_failinfo(info)
  local v, m = split_meta(info)
  local a, d, p = s_match(v, '^(%d+):(%d+):()')
  return tonum(a) or 0, tonum(d) or 0, p and s_sub(v, p) or '', m
end
