-- ---- the revisit index (keys.go: revisits, rv:<second>) ----
-- Done items due again wait in one list per due second, rv:<s>, of revisit
-- entries (a TAG_REVISIT header, then the entry, attempts 0); the zset
-- revisits orders the seconds (member s, score its ms). '' in a list is an
-- entry a recrawl --match already moved (hash rvgone: second -> how many).
-- stats: revisits counts the entries. Their labels count as done.

-- revisit files a done item in the index, due at due_ms (rounded up to the
-- second); e is its revisit entry (the header, then the entry, attempts 0).
local function revisit(due_ms, e)
  local sec = math.ceil(due_ms / 1000)
  local s = itoa(sec)
  rcall('RPUSH', crawl_key('revisit_list', s), e)
  rcall('ZADD', K.revisits, 'NX', itoa(sec * 1000), s)
  C.delta.revisits = C.delta.revisits + 1
end

-- revisit_pend moves revisit entry e (not '') from the index to pending.
local function revisit_pend(e)
  local p, m = level_of(e)
  pend(e, p, false)
  lmove(m, 'done', 'pending')
  C.delta.revisits = C.delta.revisits - 1
  C.delta.done = C.delta.done - 1
end

-- pop_revisits moves to pending up to limit revisit entries of the seconds
-- scored from lo to hi (ZRANGEBYSCORE bounds), the earliest first: a few
-- calls per second, O(limit). It returns how many entries it took off the
-- lists ('' included) and how many it moved.
local function pop_revisits(lo, hi, limit)
  local popped, moved = 0, 0
  while popped < limit do
    local b = rcall('ZRANGEBYSCORE', K.revisits, lo, hi, 'LIMIT', '0', '1')
    if #b == 0 then break end
    local es = rcall('LPOP', crawl_key('revisit_list', b[1]), itoa(limit - popped))
    if not es or #es < limit - popped then
      rcall('ZREM', K.revisits, b[1])
      rcall('HDEL', crawl_key('rvgone'), b[1])
    end
    if es then
      for _, e in ipairs(es) do
        if e ~= '' then
          revisit_pend(e)
          moved = moved + 1
        end
      end
      popped = popped + #es
    end
  end
  return popped, moved
end

-- promote_revisits moves up to limit due revisits to pending.
local function promote_revisits(limit)
  return pop_revisits('-inf', ARGV[2], limit)
end
