-- complete.lua: mark held leases done and add the items discovered in them,
-- atomically: a lost lease changes nothing and its discoveries are dropped.
-- KEYS: lib.lua's 1-10.
-- ARGV: lib.lua's 1-5; 6 the worker of every completion ('' when they are
--   not all one worker's: each record says); then per completion: token,
--   record (the lease's record as checkout wrote it, lib.lua's record; Go's
--   leaseRecord: it holds the key), bytes (tracker.Completion.Bytes, counted
--   in stats' bytes), m (discoveries), revisit ('' for a plain first visit,
--   else 'u' for a 304, counted in stats' unchanged, or '-', then the
--   revisit in ms (0: none), ':' and the next visit's revisit header:
--   redis_revisit.go, revisitArg; the item is filed in the revisit index,
--   due now + revisit), then m × (kind, a, b, entry) as in add.lua.
-- Returns the keys of the lost leases.
-- Cost: O(completions + discoveries). A lease whose stored record is the
--   one the caller sends is held (one string comparison: Lua strings are
--   interned); any other is checked as held() does, with the key of the
--   record sent. Five arguments per completion, not the key and worker
--   again: each long argument is a Lua string to make.
local ARGV = ARGV -- a register, not the library's upvalue, in the per-item loop
local lost = {}
local WORKER = ARGV[6]
-- First pass: read every lease record in one HMGET.
local toks = {}
local i = 7
while i <= #ARGV do
  toks[#toks + 1] = ARGV[i]
  local m = ARGV[i + 3]
  i = i + 5
  if m ~= '0' then i = i + tonumber(m) * 4 end -- most pages discover nothing new: skip tonumber
end
read_records(toks)
i = 7
while i <= #ARGV do
  local token, rec, bytes, m, rv = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  m = m == '0' and 0 or tonumber(m)
  i = i + 5
  local worker, ok = WORKER, REC[token] == rec and WORKER ~= '' and not DROPPED[token]
  local meta -- a record with meta is never Go's leaseRecord: held() reads it
  if not ok then
    local key = parse_record(rec)
    local l = held(token, key)
    if l then
      ok, worker, meta = true, l.worker, l.meta
    else
      lost[#lost + 1] = key
    end
  end
  if ok then
    if rv ~= '' then
      local ms, p = string.match(rv, '^.(%d+):()')
      if string.byte(rv, 1) == 117 then D.unchanged = D.unchanged + 1 end -- 'u'
      local key, d, _, _, mm, lh = parse_record(REC[token])
      if ms ~= '0' then -- filed with its depth and meta, from its record
        local hdr = string.sub(rv, p)
        revisit(NOW + tonumber(ms), hdr .. entry(key, d, 0, mm))
        rv_mark(key, hdr, 1)
      else
        rv_mark(key, lh, 0) -- a revisit not filed again
      end
    end
    drop_lease(token, worker)
    if meta then lmove(meta, 'leased', 'done') end
    worker_count(worker, 'done', 1)
    D.done = D.done + 1
    if bytes ~= '0' then D.bytes = D.bytes + tonumber(bytes) end
    for j = i, i + (m - 1) * 4, 4 do
      add_item(ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3])
    end
  end
  i = i + m * 4
end
flush()
return lost
