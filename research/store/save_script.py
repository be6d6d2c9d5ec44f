"""The ``save_source`` Lua script (``_SAVE_LUA``), run by ``SourceCollector.save_source`` as one
EVALSHA round trip: it validates the question keys against the stored syllabus, deduplicates,
numbers the source (``src_%03d``), assigns it to its questions, registers its citation and
returns the per-question counts, all atomically (the key and argument layout and the reply's
shape are in the comment above the script).
"""

from __future__ import annotations

# Returns {'ok', source_id, citation_id, duplicate 0/1, questions added, questions total,
#          then per question: count, min_sources} or {error_code, detail}.
# KEYS: 1 sources, 2 index, 3 citations, 4 metadata, 5.. question lists (parallel to ARGV 6..)
# ARGV: 1 dedup key, 2 given citation id ('' = auto-register), 3 new citation id,
#       4 citation JSON, 5 record JSON after '{"source_id": .., "relevant_questions": [..], ',
#       6.. question keys (validated, de-duplicated, safe characters only)
# Records are written with source_id, relevant_questions, citation_id first, so a duplicate's
# question list is rewritten with an anchored pattern and every other byte is kept.
_SAVE_LUA = r"""
local raw_meta = redis.call('GET', KEYS[4])
if not raw_meta then return {'not_initialised'} end
local ok, meta = pcall(cjson.decode, raw_meta)
if not ok or type(meta) ~= 'table' or type(meta.syllabus) ~= 'table' then return {'bad_metadata'} end
local mins = {}
for _, q in ipairs(meta.syllabus.questions or {}) do mins[q.key] = tonumber(q.min_sources) end
local nq = #KEYS - 4
for i = 1, nq do
  if not mins[ARGV[5 + i]] then return {'unknown_question', ARGV[5 + i]} end
end
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[3], ARGV[2]) == 0 then return {'unknown_citation'} end
local sid = redis.call('HGET', KEYS[2], ARGV[1])
local cid, dup, added, total_q
if sid then
  dup, added = 1, 0
  local idx = tonumber(string.sub(sid, 5)) - 1
  local raw = redis.call('LINDEX', KEYS[1], idx)
  local p1, p2, c = string.match(raw or '',
    '^{"source_id": "[^"]*", "relevant_questions": %[()[^%]]*()%], "citation_id": "([^"]*)"')
  if not p1 then return {'bad_record', sid} end
  cid = c
  local have, list = {}, {}
  for q in string.gmatch(string.sub(raw, p1, p2 - 1), '"([^"]+)"') do
    have[q] = true
    list[#list + 1] = '"' .. q .. '"'
  end
  for i = 1, nq do
    local q = ARGV[5 + i]
    if not have[q] then
      have[q] = true
      list[#list + 1] = '"' .. q .. '"'
      added = added + 1
      redis.call('RPUSH', KEYS[4 + i], sid)
    end
  end
  if added > 0 then
    redis.call('LSET', KEYS[1], idx, string.sub(raw, 1, p1 - 1) .. table.concat(list, ', ') .. string.sub(raw, p2))
  end
  total_q = #list
else
  dup, added, total_q = 0, nq, nq
  sid = string.format('src_%03d', redis.call('LLEN', KEYS[1]) + 1)
  local list = {}
  for i = 1, nq do
    list[i] = '"' .. ARGV[5 + i] .. '"'
    redis.call('RPUSH', KEYS[4 + i], sid)
  end
  if ARGV[2] == '' then
    cid = ARGV[3]
    redis.call('HSET', KEYS[3], cid, ARGV[4])
  else
    cid = ARGV[2]
  end
  redis.call('RPUSH', KEYS[1], '{"source_id": "' .. sid .. '", "relevant_questions": [' ..
    table.concat(list, ', ') .. '], ' .. ARGV[5])
  redis.call('HSET', KEYS[2], ARGV[1], sid)
end
local out = {'ok', sid, cid, dup, added, total_q}
for i = 1, nq do
  out[#out + 1] = redis.call('LLEN', KEYS[4 + i])
  out[#out + 1] = mins[ARGV[5 + i]]
end
return out
"""
