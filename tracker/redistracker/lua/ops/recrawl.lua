-- recrawl.lua: one batch of a recrawl pass (Inspector.Recrawl; the Go side,
-- redis_recrawl.go, picks what the batch covers).
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); 6 mode, then:
--   'ids'      pairs (lo, hi): runs of done IDs below 2^40 to put back to
--              pending (a failed one is skipped, one with a revisit left to
--              the revisit index), then '-' and huge IDs
--              (>= 2^40) one by one
--   'revisits' 7 horizon (ms), 8 at most this many entries: the revisits
--              due after now and up to the horizon go to pending, the
--              earliest first
--   'pick'     7 a revisit second, then pairs (index, entry): those entries
--              of its list (if still there) go to pending, '' in their place
-- Returns {moved, more (1: 'revisits' stopped at its count)}.
-- Cost: 'ids' O(runs) when nothing failed, else O(IDs × log(failed));
--   'revisits' O(entries); 'pick' O(entries + index).
local mode = ARGV[6]
local moved, more = 0, 0
if mode == 'ids' then
  -- A failed ID is skipped, and one with a revisit waiting or in flight
  -- (its bit in rvid:<shard>) is left to the revisit index.
  local anyfailed = rcall('ZCARD', K.failed) > 0 or tonumber(rcall('HGET', K.stats, 'rvids') or '0') > 0
  local i = 7
  while i <= #ARGV and ARGV[i] ~= '-' do
    local lo, hi = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
    if not anyfailed then
      C.push[#C.push + 1] = run_entry({lo, hi})
      moved = moved + hi - lo + 1
    else
      for id = lo, hi do
        local s = math.floor(id / SHARD_BITS)
        if not rcall('ZSCORE', K.failed, itoa(id)) and
            rcall('GETBIT', crawl_key('rvid', itoa(s)), itoa(id - s * SHARD_BITS)) == 0 then
          push_id(id)
          moved = moved + 1
        end
      end
    end
    i = i + 2
  end
  for j = i + 1, #ARGV do
    if not anyfailed or not rcall('ZSCORE', K.failed, ARGV[j]) then
      C.push[#C.push + 1] = ARGV[j]
      moved = moved + 1
    end
  end
  C.delta.done = C.delta.done - moved
  C.delta.pending = C.delta.pending + moved
elseif mode == 'revisits' then
  local popped
  popped, moved = pop_revisits('(' .. ARGV[2], ARGV[7], tonumber(ARGV[8]))
  if popped >= tonumber(ARGV[8]) then more = 1 end
elseif mode == 'pick' then
  local k = crawl_key('revisit_list', ARGV[7])
  for j = 8, #ARGV, 2 do
    local e = ARGV[j + 1]
    if rcall('LINDEX', k, ARGV[j]) == e then
      rcall('LSET', k, ARGV[j], '')
      revisit_pend(e)
      moved = moved + 1
    end
  end
  if moved > 0 then rcall('HINCRBY', crawl_key('rvgone'), ARGV[7], itoa(moved)) end
else
  return redis.error_reply('recrawl: unknown mode ' .. mode)
end
flush()
return {moved, more}
