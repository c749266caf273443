-- ---- priority levels ----

local function level_key(p)
  if p == 0 then return K.pending end
  local k = C.level_keys[p]
  if not k then
    k = crawl_key('level', itoa(p))
    C.level_keys[p] = k
  end
  return k
end

local P_FIELDS = {'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'}

local function level_count(p, n)
  if p > 0 then
    local f = P_FIELDS[p]
    C.level_delta[f] = (C.level_delta[f] or 0) + n
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


-- read_records reads the lease records of toks into REC, one HMGET per
-- 1000 (Lua's unpack has a stack limit).
local function read_records(toks)
  for i = 1, #toks, 1000 do
    local j = math.min(i + 999, #toks)
    local recs = rcall('HMGET', K.lease, unpack(toks, i, j))
    for k = i, j do C.records[toks[k]] = recs[k - i + 1] end
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
  if C.dropped[token] then return nil end
  local rec = C.records[token]
  if rec == nil then rec = rcall('HGET', K.lease, token) end
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
