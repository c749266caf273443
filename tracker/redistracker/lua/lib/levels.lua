-- ---- priority levels ----

-- PD accumulates the changes of stats' p1..p9; flush writes them.
local PD = {}
local LEVEL_KEYS, LEVEL_PREFIX = {}, nil -- the level keys of the crawl with key prefix LEVEL_PREFIX

local function level_key(p)
  if p == 0 then return K_PENDING end
  local k = LEVEL_KEYS[p]
  if not k then
    k = PREFIX .. 'pending:' .. itoa(p)
    LEVEL_KEYS[p] = k
  end
  return k
end

local P_FIELDS = {'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'}

local function level_count(p, n)
  if p > 0 then
    local f = P_FIELDS[p]
    PD[f] = (PD[f] or 0) + n
  end
end

-- level_of is the priority of an entry (0 unless TAG_EXT) and its meta.
local function level_of(e)
  if s_byte(e, 1) == TAG_REVISIT then
    local _
    _, e = split_revisit(e)
  end
  if s_byte(e, 1) ~= TAG_EXT then return 0, nil end
  local _, _, _, m = parse_ext(e)
  return m.p, m
end

-- pend puts entry e, of priority p, back in pending: at the head of its
-- level (front: it was leased first) or at the tail.
local function pend(e, p, front)
  rcall(front and 'LPUSH' or 'RPUSH', level_key(p), e)
  level_count(p, 1)
  D.pending = D.pending + 1
end

-- REC caches lease records read by prefetch; DROPPED holds the tokens this
-- script has dropped (their deletion is written at flush).
local REC, DROPPED = {}, {}

-- read_records reads the lease records of toks into REC, one HMGET per
-- 1000 (Lua's unpack has a stack limit).
local function read_records(toks)
  for i = 1, #toks, 1000 do
    local j = math.min(i + 999, #toks)
    local recs = rcall('HMGET', K_LEASE, unpack(toks, i, j))
    for k = i, j do REC[toks[k]] = recs[k - i + 1] end
  end
end

-- prefetch reads the records of tokens ARGV[first], ARGV[first+step], ...
local function prefetch(first, step)
  local toks = {}
  for i = first, #ARGV, step do toks[#toks + 1] = ARGV[i] end
  read_records(toks)
end

-- held returns the lease of token if it still leases key, else nil.
local function held(token, key)
  if DROPPED[token] then return nil end
  local rec = REC[token]
  if rec == nil then rec = rcall('HGET', K_LEASE, token) end
  if not rec then return nil end
  local k, d, a, w, m, h = parse_record(rec)
  if k ~= key then return nil end
  return {key = k, depth = d, attempts = a, worker = w, meta = m, hdr = h}
end

-- call_multi runs cmd key args... in chunks (Lua's unpack has a stack limit);
-- step is even, so pairs stay together.
local function call_multi(cmd, key, args, step)
  for i = 1, #args, step do
    rcall(cmd, key, unpack(args, i, math.min(i + step - 1, #args)))
  end
end
