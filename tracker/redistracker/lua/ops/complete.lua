-- complete.lua: mark held leases done and add the items discovered in them,
-- atomically: a lost lease changes nothing and its discoveries are dropped.
-- KEYS: the fixed keys (codes.lua).
-- ARGV: the common 1-5 (codes.lua); 6 the worker of every completion ('' when they are
--   not all one worker's: each record says); 7 the lease group of every
--   completion ('' when they are not all one group's: the library's lease
--   groups, group_of); 8 n, the completions; then per completion 3 values:
--   token, record (the lease's record as checkout wrote it, the library's
--   record; Go's leaseRecord: it holds the key), bytes
--   (tracker.Completion.Bytes, counted in stats' bytes); then, only for the
--   completions with a revisit or discoveries, in their order: the
--   completion's index (1..n), revisit ('' for a plain first visit, else
--   'u' for a 304, counted in stats' unchanged, or '-', then the revisit in
--   ms (0: none), ':' and the next visit's revisit header:
--   redis_revisit.go, revisitArg; the item is filed in the revisit index,
--   due now + revisit), m (discoveries), then m × (a, b, entry) as in
--   add.lua; then, with partitions, the outbox: per discovery bound for
--   another partition group, 3 values (completion index, entry id,
--   payload: outbox.lua); last, the number of those triples (0 for none).
-- Returns the keys of the lost leases.
-- Cost: O(completions + discoveries). A lease whose stored record is the
--   one the caller sends is held (one string comparison: Lua strings are
--   interned); any other is checked as held() does, with the key of the
--   record sent. Three arguments per plain completion: each argument is a
--   Lua string to make, so only what an item needs is sent.
local ARGV = ARGV -- a register, not the library's upvalue, in the per-item loop
local WORKER, n = ARGV[6], tonum(ARGV[8])
local GROUP = ARGV[7] ~= '' and ARGV[7] or nil
-- First pass: read every lease record in one HMGET.
local toks = {}
for k = 1, n do toks[k] = ARGV[6 + 3 * k] end
read_records(toks)
local nob = tonum(ARGV[#ARGV]) -- outbox triples before it
local nargs = #ARGV - 1 - 3 * nob
local kept = nob > 0 and {} or nil -- completions held, whose outbox parts are filed
local x = 9 + 3 * n -- the next completion with a revisit or discoveries: its index
local xk = x <= nargs and tonum(ARGV[x]) or 0
local lost = {}
local done, mine, bytes_done, new = 0, 0, 0, 0
for k = 1, n do
  local i = 6 + 3 * k
  local token, rec, bytes = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local rv, m = '', 0
  if k == xk then rv, m = ARGV[x + 1], tonum(ARGV[x + 2]) end
  local worker, ok = WORKER, C.records[token] == rec and WORKER ~= '' and not C.dropped[token]
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
      local ms, p = s_match(rv, '^.(%d+):()')
      if s_byte(rv, 1) == 117 then C.delta.unchanged = C.delta.unchanged + 1 end -- 'u'
      local key, d, _, _, mm, lh = parse_record(C.records[token])
      if ms ~= '0' then -- filed with its depth and meta, from its record
        local hdr = s_sub(rv, p)
        revisit(C.now + tonum(ms), hdr .. entry(key, d, 0, mm))
        rv_mark(key, hdr, 1)
      else
        rv_mark(key, lh, 0) -- a revisit not filed again
      end
    end
    drop_lease(token, worker, GROUP)
    if kept then kept[k] = true end
    if meta then lmove(meta, 'leased', 'done') end
    if worker == WORKER then mine = mine + 1 else worker_count(worker, 'done', 1) end
    done = done + 1
    if bytes ~= '0' then bytes_done = bytes_done + tonum(bytes) end
    for j = x + 3, x + 3 * m, 3 do
      new = new + add_item(ARGV[j], ARGV[j + 1], ARGV[j + 2])
    end
  end
  if k == xk then
    x = x + 3 + 3 * m
    xk = x <= nargs and tonum(ARGV[x]) or 0
  end
end
if kept then outbox_write(kept, nargs + 1, nob) end
if mine > 0 then worker_count(WORKER, 'done', mine) end
C.delta.done = C.delta.done + done
C.delta.bytes = C.delta.bytes + bytes_done
added(new)
flush()
return lost
