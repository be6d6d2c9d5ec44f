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

Here: the writes (``init``, ``save_source``, ``register_citation``). The reads are
``research.store.collector_reads.CollectorReads``, the script ``research.store.save_script``, a
source's identity and the input checks ``research.store.source_input``.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, cast

import redis

from research.errors import InputError, UnknownQuestionError
from research.models import SourceRecord, Syllabus, now
from research.store import keys
from research.store.collector_reads import CollectorReads
from research.store.connection import TextRedis
from research.store.coverage import display_type, fit_response, plural
from research.store.save_script import _SAVE_LUA
from research.store.source_input import (
    CITATION_ID_RE,
    MAX_QUESTION_KEY_CHARS,
    _text,
    check_syllabus,
    dedup_key,
)


class SourceCollector(CollectorReads):
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

    # ------------------------------------------------------------------ helpers
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

    @staticmethod
    def _citation(cid: str, **fields: object) -> dict[str, object]:
        return {"citation_id": cid, **fields, "created_at": now()}
