-- flush.lua: one Flush of the Redis record sink, written whole or not at
-- all (a script runs alone), so a writer killed at any point leaves every
-- page's records as they were or as it put them.
--
-- KEYS[1]      PREFIX:schema
-- then per entry i (one per rule and item key of the Flush), 1-based:
-- KEYS[3i-1]   PREFIX:cur:RULE      (hash of current Sets)
-- KEYS[3i]     PREFIX:count:RULE    (hash of counters)
-- KEYS[3i+1]   PREFIX:ver:RULE:KEY  (list of versions)
--
-- ARGV[1]      keep: versions kept per entry (LTRIM), 0 for none
-- ARGV[2]      n: schema pairs that follow, field then value, each set
--              unless set (HSETNX): a schema deleted under the sink comes
--              back
-- then per entry, in order:
--   key        the item key: the field of KEYS[3i-1]
--   expect     SHA-1 (hex) of the value the sink read there, "" for none:
--              what it marked and counted against
--   value      the new current Set, "" to delete it
--   nv         versions to push, then nv values (the Sets replaced)
--   nc         counters to change, then nc pairs counter, delta
--
-- Returns 0 once written; i when entry i's current value is no longer
-- the one the sink read (another writer's Flush came between): nothing is
-- written, and the sink reads again. A key of another type than the
-- layout's is an error reply naming it, before anything is written (a
-- script stopped by an error keeps the writes it made).
--
-- Cost: O(entries + versions + counters) commands, each O(1) but LTRIM
-- (O(versions removed)); the values are the Flush's records, sent once,
-- and each value read is hashed (SHA-1) once.

local keep = tonumber(ARGV[1])
local nschema = tonumber(ARGV[2])
local first = 3 + 2 * nschema -- ARGV index of entry 1

local function want(key, typ)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= typ then
    return redis.error_reply('WRONGTYPE ' .. key .. ' is a ' .. t .. ', not a ' .. typ)
  end
end

-- Check every entry before writing any.
local err = want(KEYS[1], 'hash')
if err then
  return err
end
local entries = {}
local a = first
local i = 1
while a <= #ARGV do
  local e = {cur = KEYS[3 * i - 1], count = KEYS[3 * i], ver = KEYS[3 * i + 1],
    key = ARGV[a], expect = ARGV[a + 1], value = ARGV[a + 2]}
  local nv = tonumber(ARGV[a + 3])
  e.versions = {a + 4, a + 3 + nv}
  a = a + 4 + nv
  local nc = tonumber(ARGV[a])
  e.counters = {a + 1, a + 2 * nc}
  a = a + 1 + 2 * nc
  err = want(e.cur, 'hash') or want(e.count, 'hash') or want(e.ver, 'list')
  if err then
    return err
  end
  local held = redis.call('HGET', e.cur, e.key)
  local sum = ''
  if held then
    sum = redis.sha1hex(held)
  end
  if sum ~= e.expect then
    return i
  end
  entries[i] = e
  i = i + 1
end

for s = 3, 2 + 2 * nschema, 2 do
  redis.call('HSETNX', KEYS[1], ARGV[s], ARGV[s + 1])
end

-- A rule whose hash of current Sets is gone (deleted by hand) has no
-- records: its counters start again from nothing.
local counted = {}
for _, e in ipairs(entries) do
  if not counted[e.count] then
    counted[e.count] = true
    if redis.call('EXISTS', e.cur) == 0 then
      redis.call('DEL', e.count)
    end
  end
end

for _, e in ipairs(entries) do
  if e.versions[2] >= e.versions[1] then
    for v = e.versions[1], e.versions[2] do
      redis.call('RPUSH', e.ver, ARGV[v])
    end
    redis.call('LTRIM', e.ver, -keep, -1)
  end
  if e.value == '' then
    redis.call('HDEL', e.cur, e.key)
  else
    redis.call('HSET', e.cur, e.key, e.value)
  end
  for c = e.counters[1], e.counters[2], 2 do
    redis.call('HINCRBY', e.count, ARGV[c], ARGV[c + 1])
  end
end
return 0
