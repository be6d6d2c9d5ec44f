"""The Redis source collector (docs/design.md § Collector tools): ``save_source``,
``get_progress``, ``check_completion``,
``finalize_sources`` for one run, working from Redis alone so any process can continue a run.

Schema (docs/design.md § Source collector, verbatim; keys built by ``research.store.keys``):

- ``source_collection:{run_id}:sources``   LIST of source JSON (``SourceRecord``); ``src_012`` is
  list index 11, so numbering is contiguous and a source is found in O(1);
- ``source_collection:{run_id}:question:{key}``  LIST of source ids assigned to that question;
- ``source_collection:{run_id}:metadata``  JSON ``{"syllabus": Syllabus, "initialised_at": s}``;
- ours: ``...:index`` HASH dedup key → source id; ``...:citations`` HASH citation id → citation JSON.

``save_source`` is one Lua script (one EVALSHA round trip): validation against the stored
syllabus, dedup, numbering, question assignment, citation registration and the per-question
counts all happen atomically, so concurrent conversation threads can never duplicate a source
or skip a number. Responses follow the "Refined" design (docs/design.md § Collector tools): flat, ✓/⚠, actionable, and
under 500 characters (``fit_response`` trims the least useful entries when a syllabus is big).

Size: most of it is the ``save_source`` Lua script and the four collector tools that read the
same keys; they change together.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import redis
from courlan import normalize_url

from research.errors import InputError, UnknownQuestionError
from research.models import SourceRecord, Syllabus, now
from research.store import keys
from research.store.connection import TextRedis
from research.store.coverage import (
    completion_report,
    deficits,
    display_type,
    fit_response,
    plural,
    progress_report,
)

MAX_QUESTION_KEY_CHARS = 64
SOURCE_ID_RE = re.compile(r"^src_(\d{3,})$")
CITATION_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")

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


def canonical_url(url: str) -> str:
    """Canonical form of a URL for dedup: courlan's normalisation (lowercase scheme and host,
    default port and tracking parameters removed, query sorted), no fragment, no trailing slash."""

    text = url.strip()
    try:
        text = normalize_url(text, trailing_slash=False)
    except (ValueError, TypeError):  # pragma: no cover - courlan rejects very odd input
        text = text.lower()
    parts = urlsplit(text)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))


def dedup_key(source_type: str, external_id: str, url: str) -> str:
    """Identity of a source (docs/design.md § Source collector): ``id:{type}:{external_id}`` when
    there is an external id (case-insensitive), else ``url:{canonical_url}``."""
    if external_id.strip():
        return f"id:{source_type.strip().lower()}:{external_id.strip().lower()}"
    return f"url:{canonical_url(url)}"


def _text(name: str, value: object, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"save_source needs {name} as a non-empty string (got {value!r:.60}).")
    return value.strip()


def check_syllabus(syllabus: Syllabus) -> Syllabus:
    """Return ``syllabus`` if usable by the collector, else raise InputError saying what to fix:
    at least one question, unique keys, keys like ``clinical.efficacy`` of ≤ 64 characters."""
    if not isinstance(syllabus, Syllabus) or not syllabus.questions:
        raise InputError(
            "The collector needs a Syllabus with at least one question (see research.planning.syllabus)."
        )
    seen = set()
    for q in syllabus.questions:
        if (
            not keys.QUESTION_KEY_RE.fullmatch(q.key)
            or len(q.key) > MAX_QUESTION_KEY_CHARS
            or q.key in seen
        ):
            raise InputError(
                f"Syllabus question key '{q.key[:80]}' is malformed, duplicated or longer than "
                f"{MAX_QUESTION_KEY_CHARS} characters; use unique keys like 'clinical.efficacy'."
            )
        seen.add(q.key)
    return syllabus


class SourceCollector:
    """Seed 000 source collector for one run.

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True`` (thread-safe; share it freely).
        run_id: the run (16–32 lowercase hex; InputError otherwise).

    All state is in Redis; a new object (in any process) continues where another left off. The
    syllabus read from metadata is cached per object and re-validated on every call that uses it.
    """

    def __init__(self, r: redis.Redis, run_id: str) -> None:
        self.r: TextRedis = r
        self.run_id = keys.check_run_id(run_id)
        self._meta_raw: str | None = None
        self._syllabus: Syllabus | None = None
        self._save = r.register_script(_SAVE_LUA)

    # ------------------------------------------------------------------ syllabus / metadata
    def init(self, syllabus: Syllabus) -> bool:
        """Store ``syllabus`` in the metadata key (docs/design.md § Source collector: metadata).
        Idempotent for resumes.

        Returns:
            True when written; False when the same syllabus was already stored (nothing changes).

        Raises:
            InputError: invalid syllabus, or a different syllabus while sources already exist
                (start a new run instead: saved sources are assigned to the old questions).
        """
        check_syllabus(syllabus)
        meta_key, sources_key = keys.collector_metadata(self.run_id), keys.sources(self.run_id)
        new_raw = json.dumps(
            {"syllabus": syllabus.model_dump(mode="json"), "initialised_at": now()},
            ensure_ascii=False,
        )

        def txn(pipe: redis.client.Pipeline) -> Any:
            raw, n = pipe.get(meta_key), pipe.llen(sources_key)
            if raw:
                old = self._parse_meta(str(raw))
                if old == syllabus:
                    return False
                if n:
                    raise InputError(
                        f"Run {self.run_id} already has {n} sources under syllabus '{old.name}'; "
                        f"it cannot switch to '{syllabus.name}'. Start a new run.",
                        code="syllabus_conflict",
                    )
            pipe.multi()
            pipe.set(meta_key, new_raw)
            return True

        return cast(bool, self.r.transaction(txn, meta_key, sources_key, value_from_callable=True))

    def syllabus(self) -> Syllabus:
        """The run's syllabus, read from Redis metadata.

        Raises:
            InputError (code ``collector_not_initialised``): ``init`` was never called for this run.
        """
        return self._use_meta(self.r.get(keys.collector_metadata(self.run_id)))

    def _parse_meta(self, raw: str) -> Syllabus:
        try:
            return Syllabus.model_validate(json.loads(raw)["syllabus"])
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"Collector metadata of run {self.run_id} is unreadable ({exc}); "
                "re-run the planning step.",
                code="collector_not_initialised",
            ) from None

    def _use_meta(self, raw: str | None) -> Syllabus:
        if not raw:
            raise InputError(
                f"Run {self.run_id} has no source collection yet: call init(syllabus) first "
                "(the planning step does).",
                code="collector_not_initialised",
            )
        if raw != self._meta_raw or self._syllabus is None:
            self._syllabus, self._meta_raw = self._parse_meta(raw), raw
        return self._syllabus

    def _snapshot(self, *, lists: bool) -> tuple[Syllabus, Any, list[Any]]:
        """One pipelined round trip: GET metadata, then the sources list (LLEN, or LRANGE when
        ``lists``) and each question list of the cached syllabus. Retried if the syllabus changed."""
        for _ in range(3):
            syl = self._syllabus or self.syllabus()
            pipe = self.r.pipeline(transaction=False)
            pipe.get(keys.collector_metadata(self.run_id))
            for key in [
                keys.sources(self.run_id),
                *(keys.question(self.run_id, k) for k in syl.keys()),
            ]:
                pipe.lrange(key, 0, -1) if lists else pipe.llen(key)
            raw, sources, *per_question = pipe.execute()
            if self._use_meta(raw) is syl:
                return syl, sources, per_question
        raise InputError(
            f"The syllabus of run {self.run_id} keeps changing; retry.",
            code="collector_not_initialised",
        )  # pragma: no cover

    # ------------------------------------------- collector tools (docs/design.md § Collector tools)
    def save_source(
        self,
        source_type: str,
        external_id: str,
        url: str,
        title: str,
        relevant_questions: list[str],
        key_excerpts: str | None = None,
        citation_id: str | None = None,
        found_by: list[str] | None = None,
    ) -> dict[str, Any]:
        """Save a source and assign it to relevant questions (docs/design.md § Collector tools,
        final ``save_source``).

        One atomic Lua call (one round trip). Automatic citation registration: without
        ``citation_id`` a citation is registered from the metadata (claim = title, source_id =
        external_id, direct_quote = key_excerpts or title, context = "Source: {url}"); a given
        ``citation_id`` must already exist. Deduplication: a source already saved (same
        source_type + external_id, or same canonical URL when external_id is empty) is not saved
        again; the new question keys are added to it and its existing ids are returned.

        Args:
            source_type: e.g. "pubmed", "clinicaltrials.gov", "web" (stored lowercase).
            external_id: PMID, NCT number...; "" when there is none (the URL identifies it).
            url: full URL of the source. title: document title.
            relevant_questions: syllabus keys this source answers; [] saves it unassigned.
            key_excerpts: optional 1–2 sentence summary (a list of strings is joined with spaces).
            citation_id: optional, when the citation was registered already.
            found_by: optional ``"backend: query"`` strings (which search found it);
                kept on the first save only.

        Returns:
            ``{"source_id": "src_012", "citation_id": "cit_<hex>", "citation_status": "existing" |
            "auto_registered", "assigned_to": [keys], "status": {key:
            "sufficient" | "insufficient"}, "message": "✓ Saved source #12 (PubMed) → 2 questions"}``,
            under 500 characters.

        Raises:
            UnknownQuestionError: a key not in the run's syllabus (the message lists valid keys).
            InputError: empty source_type/url/title, relevant_questions not a list of strings,
                unknown ``citation_id`` (code ``unknown_citation``), collector not initialised.
        """
        stype = _text("source_type", source_type).lower()
        ext, link, name = (
            _text("external_id", external_id, required=False),
            _text("url", url),
            _text("title", title),
        )
        if isinstance(key_excerpts, (list, tuple)) and all(
            isinstance(x, str) for x in key_excerpts
        ):
            key_excerpts = " ".join(
                x.strip() for x in key_excerpts
            )  # the first draft (docs/design.md § Collector tools) took a list
        excerpt = _text("key_excerpts", key_excerpts, required=False)
        qs = self._question_keys(relevant_questions)
        if citation_id is not None and not (
            isinstance(citation_id, str) and CITATION_ID_RE.fullmatch(citation_id)
        ):
            raise InputError(
                f"citation_id {citation_id!r:.60} is not a citation id; omit it to auto-register one.",
                code="unknown_citation",
            )
        new_cid = f"cit_{secrets.token_hex(6)}"
        record = SourceRecord(
            source_id="",
            citation_id=citation_id or new_cid,
            source_type=stype,
            external_id=ext,
            url=link,
            title=name,
            key_excerpts=excerpt,
            found_by=[str(x)[:300] for x in (found_by or [])][:10],
        ).model_dump(mode="json")
        del record["source_id"], record["relevant_questions"]
        tail = json.dumps({"citation_id": record.pop("citation_id"), **record}, ensure_ascii=False)[
            1:
        ]
        citation = self._citation(
            new_cid,
            claim=name,
            source_type=stype,
            source_id=ext,
            direct_quote=excerpt or name,
            context=f"Source: {link}",
            metadata={"title": name, "url": link, "source_type": stype},
        )
        out = self._save(
            keys=[
                keys.sources(self.run_id),
                keys.source_index(self.run_id),
                keys.citations(self.run_id),
                keys.collector_metadata(self.run_id),
                *(keys.question(self.run_id, q) for q in qs),
            ],
            args=[
                dedup_key(stype, ext, link),
                citation_id or "",
                new_cid,
                json.dumps(citation, ensure_ascii=False),
                tail,
                *qs,
            ],
        )
        if out[0] != "ok":
            self._raise(out, citation_id)
        sid, cid, dup, added, total_q, *pairs = out[1:]  # pairs: count, min_sources per question
        status = {
            q: "sufficient" if pairs[2 * i] >= pairs[2 * i + 1] else "insufficient"
            for i, q in enumerate(qs)
        }
        num, kind = int(sid[4:]), display_type(stype)
        if not dup:
            message = f"✓ Saved source #{num} ({kind}) → {plural(len(qs), 'question')}"
        elif added:
            message = f"✓ Source #{num} ({kind}) already saved → +{plural(added, 'question')} ({total_q} total)"
        else:
            message = f"✓ Source #{num} ({kind}) already saved → no new questions"
        resp = {
            "source_id": sid,
            "citation_id": cid,
            "citation_status": "existing" if (citation_id or dup) else "auto_registered",
            "assigned_to": qs,
            "status": status,
            "message": message,
        }
        drop = [q for q in reversed(qs) if status[q] == "sufficient"] + [
            q for q in reversed(qs) if status[q] != "sufficient"
        ]
        return fit_response(resp, [("status", drop), ("assigned_to", list(reversed(qs)))])

    def _question_keys(self, relevant_questions: object) -> list[str]:
        if isinstance(relevant_questions, str) or not isinstance(relevant_questions, (list, tuple)):
            raise InputError(
                "relevant_questions must be a list of question keys, e.g. ['clinical.efficacy'] "
                f"(got {relevant_questions!r:.60}); pass [] to save without assigning."
            )
        qs = list(
            dict.fromkeys(q.strip() if isinstance(q, str) else repr(q) for q in relevant_questions)
        )
        bad = [
            q
            for q in qs
            if len(q) > MAX_QUESTION_KEY_CHARS or not keys.QUESTION_KEY_RE.fullmatch(q)
        ]
        if bad:
            self._unknown(bad)
        return qs

    def _unknown(self, bad: list[str]) -> None:
        valid = ", ".join(self.syllabus().keys())
        raise UnknownQuestionError(
            f"Unknown question key(s) {', '.join(repr(b)[:70] for b in bad)}: "
            f"valid keys are {valid}."
        )

    def _raise(self, out: list[Any], citation_id: str | None) -> None:
        code = out[0]
        if code == "unknown_question":
            self._unknown([out[1]])
        if code == "unknown_citation":
            raise InputError(
                f"Citation {citation_id} not found in run {self.run_id}; register it first or omit "
                "citation_id to auto-register one.",
                code="unknown_citation",
            )
        if code in ("not_initialised", "bad_metadata"):
            self.syllabus()  # raises the not-initialised / unreadable error
        raise InputError(
            f"Source {out[1:]} of run {self.run_id} is unreadable ({code}).",
            code="collector_corrupt",
        )  # pragma: no cover - only if another writer broke it

    def get_progress(self) -> dict[str, Any]:
        """Seed 000 ``get_progress``: ``{"total", "questions", "summary", "next_focus"}`` (see
        ``progress_report``). One round trip of LLENs: cost grows with questions, not sources."""
        syl, total, counts = self._snapshot(lists=False)
        return progress_report(syl, dict(zip(syl.keys(), counts, strict=True)), int(total))

    def coverage_gaps(self) -> list[str]:
        """Every unmet question key, largest deficit first (ties: syllabus order): ``next_focus``
        without the cap of 3 (docs/design.md § Collector tools), for steering parallel conversations (one per gap)."""
        syl, _, counts = self._snapshot(lists=False)
        return list(deficits(syl, dict(zip(syl.keys(), counts, strict=True))))

    def check_completion(self, min_databases: int = 1) -> dict[str, Any]:
        """Seed 000 ``check_completion``: ``{"ready", "progress", "missing", "suggestion"}`` (see
        ``completion_report``); ready when every question has ``min_sources`` sources.

        ``min_databases`` > 1 adds the "Sources span multiple databases" criterion (docs/design.md § Completion): the
        saved sources must come from at least that many source types (pubmed, web...); the
        response then has ``"databases"`` and is not ready below it. Default 1: unchanged."""
        if min_databases <= 1:
            syl, _, counts = self._snapshot(lists=False)
            return completion_report(syl, dict(zip(syl.keys(), counts, strict=True)))
        syl, raw_sources, counts = self._snapshot(lists=True)
        types = sorted({SourceRecord.model_validate_json(x).source_type for x in raw_sources})
        return completion_report(
            syl,
            dict(zip(syl.keys(), (len(c) for c in counts), strict=True)),
            source_types=types,
            min_databases=min_databases,
        )

    def finalize_sources(self) -> dict[str, Any]:
        """Seed 000 ``finalize_sources`` (internal workflow tool; no size limit): sources
        organised by question for synthesis, in one round trip.

        Returns:
            ``{"questions": {key: {"label", "min_sources", "sources": [source dicts in
            assignment order]}}, "sources": [all source dicts, src_001 first], "total": n}``;
            source dicts are ``SourceRecord.model_dump(mode="json")``.
        """
        syl, raw_sources, per_question = self._snapshot(lists=True)
        sources = [SourceRecord.model_validate_json(x).model_dump(mode="json") for x in raw_sources]
        by_id = {s["source_id"]: s for s in sources}
        return {
            "questions": {
                q.key: {
                    "label": q.label,
                    "min_sources": q.min_sources,
                    "sources": [by_id[i] for i in ids if i in by_id],
                }
                for q, ids in zip(syl.questions, per_question, strict=True)
            },
            "sources": sources,
            "total": len(sources),
        }

    # ------------------------------------------------------------------ helpers
    def question_counts(self) -> dict[str, int]:
        """``key → number of sources`` in syllabus order (one round trip)."""
        syl, _, counts = self._snapshot(lists=False)
        return {k: int(n) for k, n in zip(syl.keys(), counts, strict=True)}

    def all_sources(self) -> list[SourceRecord]:
        """Every saved source in saving order (``src_001`` first); [] before the first save."""
        return [
            SourceRecord.model_validate_json(x)
            for x in self.r.lrange(keys.sources(self.run_id), 0, -1)
        ]

    def get_source(self, source_id: str) -> SourceRecord:
        """One source by id (O(1): ``src_012`` is list index 11).

        Raises:
            InputError (code ``unknown_source``): malformed id or no such source in this run.
        """
        m = SOURCE_ID_RE.fullmatch(source_id) if isinstance(source_id, str) else None
        raw = (
            self.r.lindex(keys.sources(self.run_id), int(m.group(1)) - 1)
            if m and int(m.group(1)) > 0
            else None
        )
        record = SourceRecord.model_validate_json(raw) if raw else None
        if record is None or record.source_id != source_id:
            raise InputError(
                f"No source {str(source_id)[:40]!r} in run {self.run_id} (ids look like src_012).",
                code="unknown_source",
            )
        return record

    def register_citation(
        self,
        claim: str,
        source_type: str,
        source_id: str,
        direct_quote: str,
        context: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Register a citation explicitly (docs/design.md § Collector tools); returns its id ``cit_<12 hex>``.

        Fields are stored as given in the ``citations`` hash; ``source_id`` is the external id
        (PMID, NCT...). Raises InputError when claim or source_type is empty.
        """
        _text("claim", claim), _text("source_type", source_type)
        cid = f"cit_{secrets.token_hex(6)}"
        doc = self._citation(
            cid,
            claim=claim.strip(),
            source_type=source_type.strip().lower(),
            source_id=str(source_id or ""),
            direct_quote=str(direct_quote or claim),
            context=str(context or ""),
            metadata=dict(metadata or {}),
        )
        self.r.hset(keys.citations(self.run_id), cid, json.dumps(doc, ensure_ascii=False))
        return cid

    def get_citation(self, citation_id: str) -> dict[str, Any] | None:
        """The stored citation dict (``citation_id, claim, source_type, source_id, direct_quote,
        context, metadata, created_at``), or None when it is not registered."""
        raw = self.r.hget(keys.citations(self.run_id), citation_id)
        return json.loads(raw) if raw else None

    @staticmethod
    def _citation(cid: str, **fields: object) -> dict[str, object]:
        return {"citation_id": cid, **fields, "created_at": now()}
