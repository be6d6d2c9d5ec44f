"""The Redis source collector, exactly per seed 000: ``save_source`` (automatic citation
registration, deduplication of one source across questions, assignment to
``relevant_questions``), ``get_progress``, ``check_completion``, ``finalize_sources``.

Schema (seed 000, verbatim): ``source_collection:{run_id}:sources`` (list of source JSON),
``source_collection:{run_id}:question:{key}`` (list of source ids), ``...:metadata`` (JSON: the
syllabus). Our additions: ``...:index`` (hash dedup key → list position, O(1) dedup) and
``...:citations`` (hash citation id → citation JSON).

``save_source`` is one Lua script (one round trip; atomic, so concurrent conversation threads
never duplicate a source or skip a number). Tool responses stay under 500 characters with ✓/⚠
and ``next_focus`` (seed 000, "Refined" responses).
"""

from __future__ import annotations

import json
import secrets
from urllib.parse import urlsplit, urlunsplit

import redis

from research.errors import InputError, UnknownQuestionError
from research.models import SourceRecord, Syllabus, now
from research.store import keys

MAX_RESPONSE_CHARS = 500
TYPE_NAMES = {"pubmed": "PubMed", "clinicaltrials.gov": "ClinicalTrials.gov", "clinicaltrials": "ClinicalTrials.gov",
              "wikipedia": "Wikipedia", "web": "Web", "local": "Local file"}

# KEYS: sources, index, citations, question lists...   ARGV: dedup, source json, given citation id,
# citation json, new citation id, question keys... (parallel to the question list KEYS)
_SAVE_LUA = """
local pos = redis.call('HGET', KEYS[2], ARGV[1])
local nq = #KEYS - 3
local src, status, dup
if pos then
  src = cjson.decode(redis.call('LINDEX', KEYS[1], tonumber(pos)))
  if type(src.relevant_questions) ~= 'table' then src.relevant_questions = {} end
  local have = {}
  for _, q in ipairs(src.relevant_questions) do have[q] = true end
  for i = 1, nq do
    local q = ARGV[5 + i]
    if not have[q] then
      table.insert(src.relevant_questions, q)
      have[q] = true
      redis.call('RPUSH', KEYS[3 + i], src.source_id)
    end
  end
  redis.call('LSET', KEYS[1], tonumber(pos), cjson.encode(src))
  status = 'existing'
  dup = 1
else
  src = cjson.decode(ARGV[2])
  if ARGV[3] ~= '' then
    if redis.call('HEXISTS', KEYS[3], ARGV[3]) == 0 then
      return redis.error_reply('unknown_citation')
    end
    src.citation_id = ARGV[3]
    status = 'existing'
  else
    src.citation_id = ARGV[5]
    redis.call('HSET', KEYS[3], ARGV[5], ARGV[4])
    status = 'auto_registered'
  end
  local n = redis.call('RPUSH', KEYS[1], 'placeholder')
  src.source_id = string.format('src_%03d', n)
  src.relevant_questions = {}
  for i = 1, nq do
    table.insert(src.relevant_questions, ARGV[5 + i])
    redis.call('RPUSH', KEYS[3 + i], src.source_id)
  end
  redis.call('LSET', KEYS[1], n - 1, cjson.encode(src))
  redis.call('HSET', KEYS[2], ARGV[1], n - 1)
  dup = 0
end
local counts = {}
for i = 1, nq do counts[i] = redis.call('LLEN', KEYS[3 + i]) end
return {cjson.encode(src), status, dup, cjson.encode(counts)}
"""


def canonical_url(url: str) -> str:
    """Lowercase scheme and host, drop a trailing slash (fragments are kept: they name sections)."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query,
                       parts.fragment))


def dedup_key(source_type: str, external_id: str, url: str) -> str:
    """Identity of a source: ``type:external_id`` when there is an id, else its canonical URL."""
    if external_id and external_id.strip():
        return f"{source_type.strip().lower()}:{external_id.strip().lower()}"
    return f"url:{canonical_url(url)}"


def _record(raw: str) -> SourceRecord:
    d = json.loads(raw)
    if not isinstance(d.get("relevant_questions"), list):  # cjson encodes {} for an empty array
        d["relevant_questions"] = []
    return SourceRecord.model_validate(d)


def _fit(d: dict, trim_key: str) -> dict:
    """Drop entries of ``d[trim_key]`` (from the end) until the JSON is < 500 chars."""
    while len(json.dumps(d, ensure_ascii=False)) >= MAX_RESPONSE_CHARS and d.get(trim_key):
        items = list(d[trim_key].items())[:-1]
        d[trim_key] = dict(items)
        d["truncated"] = True
    return d


class SourceCollector:
    """Seed 000 collector for one run, working from Redis alone (any process can continue).

    Args:
        r: redis client with ``decode_responses=True``.
        run_id: the run (validated).
    """

    def __init__(self, r: redis.Redis, run_id: str) -> None:
        self.r = r
        self.run_id = keys.check_run_id(run_id)
        self._syllabus: Syllabus | None = None
        self._save = r.register_script(_SAVE_LUA)

    # ------------------------------------------------------------------ syllabus
    def init(self, syllabus: Syllabus) -> None:
        """Store the syllabus in the metadata key (idempotent)."""
        meta = {"syllabus": syllabus.model_dump(), "created_at": now()}
        self.r.set(keys.collector_metadata(self.run_id), json.dumps(meta), nx=True)
        self._syllabus = None

    def syllabus(self) -> Syllabus:
        """The run's syllabus (cached after the first read). Raises InputError if not initialised."""
        if self._syllabus is None:
            raw = self.r.get(keys.collector_metadata(self.run_id))
            if not raw:
                raise InputError(f"Run {self.run_id} has no syllabus yet; the planner sets it.")
            self._syllabus = Syllabus.model_validate(json.loads(raw)["syllabus"])
        return self._syllabus

    # ------------------------------------------------------------------ tools
    def save_source(self, source_type: str, external_id: str, url: str, title: str,
                    relevant_questions: list[str], key_excerpts: str | None = None,
                    citation_id: str | None = None) -> dict:
        """Save a source and assign it to questions (seed 000, final ``save_source``).

        A source already saved (same type + external id, or same URL without an id) is not
        duplicated: the new questions are added to it. Without ``citation_id`` a citation is
        auto-registered (claim = title, direct_quote = key_excerpts or title).

        Returns:
            ``{source_id, citation_id, citation_status, assigned_to, status, message}`` (< 500 chars).

        Raises:
            UnknownQuestionError: a key not in the syllabus (message lists the valid keys).
            InputError: missing title/url/source_type, or an unknown ``citation_id``.
        """
        syl = self.syllabus()
        valid = syl.keys()
        qs = list(dict.fromkeys(q.strip() for q in (relevant_questions or [])))
        bad = [q for q in qs if q not in valid]
        if bad:
            raise UnknownQuestionError(f"Unknown question key(s) {bad}; valid keys: {', '.join(valid)}.")
        if not (source_type or "").strip() or not (title or "").strip() or not (url or external_id or "").strip():
            raise InputError("save_source needs source_type, title and a url or external_id.")
        excerpt = (key_excerpts or "").strip()[:600]
        source = {"source_type": source_type.strip(), "external_id": (external_id or "").strip(),
                  "url": (url or "").strip(), "title": title.strip()[:500], "key_excerpts": excerpt,
                  "saved_at": now()}
        citation = {"claim": source["title"], "source_type": source["source_type"],
                    "source_id": source["external_id"], "direct_quote": excerpt or source["title"],
                    "context": f"Source: {source['url']}",
                    "metadata": {"title": source["title"], "url": source["url"], "source_type": source["source_type"]}}
        try:
            raw, status, dup, counts = self._save(
                keys=[keys.sources(self.run_id), keys.source_index(self.run_id), keys.citations(self.run_id),
                      *[keys.question(self.run_id, q) for q in qs]],
                args=[dedup_key(source_type, external_id, url), json.dumps(source), citation_id or "",
                      json.dumps(citation), f"cit_{secrets.token_hex(6)}", *qs])
        except redis.ResponseError as exc:
            if "unknown_citation" in str(exc):
                raise InputError(f"Citation {citation_id} not found; omit citation_id to auto-register one.") from exc
            raise
        rec = _record(raw)
        counts = json.loads(counts) if counts != "{}" else []
        mins = {q.key: q.min_sources for q in syl.questions}
        state = {q: ("sufficient" if c >= mins[q] else "insufficient") for q, c in zip(qs, counts)}
        num = int(rec.source_id.split("_")[1])
        kind = TYPE_NAMES.get(rec.source_type.lower(), rec.source_type)
        if int(dup):
            message = f"✓ Source #{num} ({kind}) already saved → now {len(rec.relevant_questions)} questions"
        else:
            message = f"✓ Saved source #{num} ({kind}) → {len(qs)} question{'s' if len(qs) != 1 else ''}"
        return _fit({"source_id": rec.source_id, "citation_id": rec.citation_id,
                     "citation_status": "existing" if citation_id or int(dup) else status,
                     "assigned_to": qs, "status": state, "message": message}, "status")

    def question_counts(self) -> dict[str, int]:
        """Source count per syllabus key, in syllabus order (one pipelined round trip)."""
        syl = self.syllabus()
        pipe = self.r.pipeline(transaction=False)
        for q in syl.questions:
            pipe.llen(keys.question(self.run_id, q.key))
        return dict(zip(syl.keys(), (int(n) for n in pipe.execute())))

    def _status(self) -> tuple[int, dict[str, int], Syllabus]:
        syl = self.syllabus()
        pipe = self.r.pipeline(transaction=False)
        pipe.llen(keys.sources(self.run_id))
        for q in syl.questions:
            pipe.llen(keys.question(self.run_id, q.key))
        total, *counts = pipe.execute()
        return int(total), dict(zip(syl.keys(), map(int, counts))), syl

    def get_progress(self) -> dict:
        """Seed 000 ``get_progress``: ``{total, questions, summary, next_focus}`` (< 500 chars).

        Cost grows with the number of questions, not sources (LLEN only).
        """
        total, counts, syl = self._status()
        lines, deficits = {}, []
        for q in syl.questions:
            c, need = counts[q.key], q.min_sources - counts[q.key]
            noun = "source" if c == 1 else "sources"
            lines[q.key] = f"✓ {c} {noun}" if need <= 0 else f"⚠ {c} {noun} (need {need} more)"
            if need > 0:
                deficits.append((need, q.key))
        done = len(syl.questions) - len(deficits)
        needed = sum(n for n, _ in deficits)
        focus = [k for _, k in sorted(deficits, key=lambda x: -x[0])][:3]
        summary = f"{done}/{len(syl.questions)} questions complete" + (
            f", {needed} more sources needed" if needed else ", all targets met")
        return _fit({"total": total, "questions": lines, "summary": summary, "next_focus": focus}, "questions")

    def check_completion(self) -> dict:
        """Seed 000 ``check_completion``: ``{ready, progress, missing, suggestion}`` (< 500 chars)."""
        _, counts, syl = self._status()
        missing = {q.key: f"Need {q.min_sources - counts[q.key]} more sources (currently {counts[q.key]}/{q.min_sources})"
                   for q in syl.questions if counts[q.key] < q.min_sources}
        done = len(syl.questions) - len(missing)
        pct = round(100 * done / len(syl.questions)) if syl.questions else 100
        worst = sorted(missing, key=lambda k: counts[k] - syl.get(k).min_sources)[:2]
        suggestion = ("All questions have enough sources; ready to write." if not missing else
                      "Focus on " + " and ".join(syl.get(k).label.lower() for k in worst))
        return _fit({"ready": not missing, "progress": f"{done}/{len(syl.questions)} questions complete ({pct}%)",
                     "missing": missing, "suggestion": suggestion}, "missing")

    def all_sources(self) -> list[SourceRecord]:
        """Every saved source, in saving order (``src_001`` first)."""
        return [_record(x) for x in self.r.lrange(keys.sources(self.run_id), 0, -1) if x != "placeholder"]

    def get_source(self, source_id: str) -> SourceRecord:
        """One source by id. Raises InputError when it does not exist."""
        try:
            idx = int(source_id.split("_")[1]) - 1
        except (IndexError, ValueError):
            raise InputError(f"'{source_id}' is not a source id (expected e.g. src_012).") from None
        raw = self.r.lindex(keys.sources(self.run_id), idx) if idx >= 0 else None
        if not raw or raw == "placeholder":
            raise InputError(f"No source {source_id} in run {self.run_id}.")
        return _record(raw)

    def finalize_sources(self) -> dict:
        """Seed 000 ``finalize_sources`` (internal, never shown to an agent): sources organised by
        question. Returns ``{questions: {key: {label, min_sources, sources: [...]}}, sources, total}``."""
        syl = self.syllabus()
        sources = [s.model_dump() for s in self.all_sources()]
        by_id = {s["source_id"]: s for s in sources}
        pipe = self.r.pipeline(transaction=False)
        for q in syl.questions:
            pipe.lrange(keys.question(self.run_id, q.key), 0, -1)
        per_q = pipe.execute()
        return {"questions": {q.key: {"label": q.label, "min_sources": q.min_sources,
                                      "sources": [by_id[i] for i in ids if i in by_id]}
                              for q, ids in zip(syl.questions, per_q)},
                "sources": sources, "total": len(sources)}
