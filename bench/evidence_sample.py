"""Sample the (question, passage) pairs of the evidence-judgement labelled set, and build the set.

``python -m bench.evidence_sample sample`` writes ``bench/data/evidence_candidates.jsonl``: the
pairs to label, chosen by a seeded, deterministic procedure (same data + same seed = same file).
``python -m bench.evidence_sample build`` joins the candidates with the hand judgements in
``bench/data/evidence_judgements.tsv`` (``id<TAB>1|0<TAB>note``, one line per pair) and writes
``bench/data/evidence_labels.jsonl``; a candidate without a judgement is an error.

How pairs are drawn (``SEED``; see ``bench/data/evidence_labels.md`` for the counts):

- **Drug topic** ("Trastuzumab in HER2-positive breast cancer", the six ``STORM_QUESTIONS``
(docs/design.md § Question syllabus)).
  Passages are whole sentences (``research.text.split_sentences``) or, for
  one in four, two consecutive sentences of the same document, from (a) the corpus documents
  that mention trastuzumab, Herceptin, HER2 or ERBB2, (b) the SciFact abstracts that do
  (``shared/data/beir/scifact``: the corpus has almost no mechanism text) and (c) other
  breast-cancer RCT abstracts of the corpus (hard negatives: results for other drugs). For each
  question: up to ``DRUG_CUE`` passages matching the question's cue words (likely positives),
  ``DRUG_OTHER`` matching another question's cues (on-topic passages that answer something
  else), ``DRUG_TOPIC`` on-topic passages matching no cue, ``DRUG_RCT`` from (c).
- **General topics** (the ``general`` template on ``GENERAL_TOPICS``, passages from the corpus's
  ``FreshWiki: <topic>`` documents): per (topic, question) ``GEN_CUE`` passages matching the
  question's cues and ``GEN_RANDOM`` drawn from the topic's other passages.

Cue words only stratify the draw so that each question gets enough likely positives; the labels
are judged by reading each pair, never from the cues.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import sys
from pathlib import Path

from research.planning.syllabus import GENERAL_QUESTIONS, STORM_QUESTIONS
from research.text import split_sentences

SEED = 20
ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
SHARED = ROOT.parents[1] / "shared" / "data"
CORPUS = SHARED / "corpus" / "docs.jsonl"
SCIFACT = SHARED / "beir" / "scifact" / "corpus.jsonl"
CANDIDATES = DATA / "evidence_candidates.jsonl"
JUDGEMENTS = DATA / "evidence_judgements.tsv"
LABELS = DATA / "evidence_labels.jsonl"

DRUG_TOPIC = "Trastuzumab in HER2-positive breast cancer"
GENERAL_TOPICS = (
    "Joe Biden classified documents incident",
    "2022 Pakistan floods",
    "Georgia Guidestones",
    "OceanGate",
)
DRUG_CUE, DRUG_OTHER, DRUG_TOPIC_N, DRUG_NEG, DRUG_RCT = 20, 8, 5, 4, 3
GEN_CUE, GEN_RANDOM = 5, 5
SPAN2_SHARE = 0.25
MIN_WORDS = 6

ON_TOPIC = re.compile(r"trastuzumab|herceptin|\bher-?2\b|erbb2", re.I)
# documents about HER2-positive disease or its drugs (the rest of ON_TOPIC is HER2-negative)
FOCUS = re.compile(
    r"trastuzumab|herceptin|HER-?2[- ]?(?:positive|\+|overexpress|amplif)|anti-HER-?2|"
    r"HER-?2[- ]targeted|lapatinib|pertuzumab|neratinib|ERBB2",
    re.I,
)
BREAST_RCT = "breast cancer randomized controlled trials (PICO-Corpus)"

DRUG_CUES = {
    "mechanism.moa": r"\bbind|receptor|domain|signal|pathway|ADCC|antibody-dependent|mechanis|"
    r"dimeri|phosphoryl|monoclonal|kinase|resistan|downstream|inhibit",
    "clinical.efficacy": r"hazard ratio|\bHR\b|\bp ?[<=]|response rate|survival|\bDFS\b|\bEFS\b|"
    r"\bOS\b|\bpCR\b|pathologic(?:al)? complete|improv|benefit|recurrence",
    "clinical.safety": r"cardi|toxic|adverse|LVEF|ejection|grade ?[34]|neutropeni|diarrh|safety|"
    r"tolerab|heart failure|nausea|rash|side effect",
    "competitive.landscape": r"lapatinib|pertuzumab|neratinib|T-DM1|emtansine|bevacizumab|"
    r"biosimilar|SB3|CT-P6|tucatinib|everolimus|combination|\bplus\b|versus|compared",
    "market.status": r"approv|\bFDA\b|\bEMA\b|licens|market|commerc|phase (?:I|II|III|1|2|3)\b|"
    r"reimburs|\bcost|standard (?:of care|treatment)|biosimilar",
    "ip.patents": r"patent|exclusiv|formulation|subcutaneous|biosimilar|intravenous|generic|"
    r"reference product",
}
_T = r"(?:trastuzumab|herceptin|T-DM1|emtansine|SB3|TRZ|CT-P6)"
_FINDING = r"(?:\d+(?:\.\d+)?\s?%|\bHR\b|hazard ratio|odds ratio|P ?[<=]|significant|improv|reduc)"
STRICT_CUES = {  # regex, passages to draw
    "mechanism.moa": (
        r"(?:trastuzumab|HER2|HER3|ERBB2).{0,200}(?:signal|pathway|dimeri|phosphoryl|resistan|"
        r"ADCC|antibody-dependent|\bbind|kinase|PI3K|AKT)",
        24,
    ),
    "clinical.efficacy": (
        _T + r".{0,200}(?:survival|DFS|EFS|pCR|response|relapse|recurrence|PFS|TTP)"
        r".{0,200}" + _FINDING,
        22,
    ),
    "clinical.safety": (
        _T + r".{0,200}(?:cardiac|LVEF|CHF|heart failure|adverse|toxicit|grade|tolera)",
        20,
    ),
    "competitive.landscape": (
        r"(?:lapatinib|pertuzumab|neratinib|T-DM1|emtansine|biosimilar|afatinib).{0,200}"
        + _FINDING,
        16,
    ),
}
LOOSE_CUES = {  # regex, passages to draw
    "clinical.efficacy": (r"survival|\bDFS\b|\bEFS\b|\bpCR\b|response rate|relapse|recurrence", 10),
    "clinical.safety": (r"cardiac|LVEF|\bCHF\b|heart failure|adverse|toxicit|grade [34]", 14),
}
GEN_CUES = {
    "background.overview": r"\b(?:is|was|are|were) (?:a|an|the)\b|located|consist|known as|refers",
    "history.timeline": r"\b(?:1[89]\d\d|20[0-2]\d)\b|January|February|March|April|May|June|July|"
    r"August|September|October|November|December|began|founded|erected|first",
    "key.actors": r"President|Attorney|Army|government|minister|company|founder|CEO|counsel|FBI|"
    r"United Nations|organization|agency|police|Rush|Garland|Hur|Sheikh|Sharif",
    "impact.effects": r"killed|deaths?|died|damage|affected|displaced|billion|million|destroy|"
    r"injur|loss|cost|reaction|response|aid",
    "debate.controversies": r"critic|controvers|conspiracy|disput|accus|denounc|condemn|claim|"
    r"misinformation|Satan|concern|warn|lawsuit|allege",
    "outlook.future": r"\bwill\b|would|plan|future|expected|ongoing|as of|currently|remain|rebuild|"
    r"announced|suspend|no longer|closed",
}


def pair_id(topic: str, key: str, passage: str) -> str:
    """Stable id of a pair: ``ev-`` + the first 10 hex digits of sha1(topic|key|passage)."""
    return "ev-" + hashlib.sha1(f"{topic}|{key}|{passage}".encode()).hexdigest()[:10]


def _passages(doc_id: str, text: str, rng: random.Random) -> list[tuple[str, str]]:
    """``(doc_id, passage)``: each sentence of ``MIN_WORDS``+ words, or with ``SPAN2_SHARE``
    chance that sentence and the next one (a 2-sentence span)."""
    sents = split_sentences(text)
    out = []
    for i, s in enumerate(sents):
        if len(s.split()) < MIN_WORDS:
            continue
        if i + 1 < len(sents) and rng.random() < SPAN2_SHARE:
            s = f"{s} {sents[i + 1]}"
        out.append((doc_id, s))
    return out


def _load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _take(rng: random.Random, pool: list, n: int, seen: set[str]) -> list:
    picks = list({p[1]: p for p in pool if p[1] not in seen}.values())
    rng.shuffle(picks)
    out = picks[:n]
    seen.update(p[1] for p in out)
    return out


def _row(topic: str, key: str, q: dict, doc_id: str, passage: str, stratum: str) -> dict:
    return {
        "id": pair_id(topic, key, passage),
        "topic": topic,
        "question_key": key,
        "label": q["label"],
        "description": q["description"],
        "passage": passage,
        "doc_id": doc_id,
        "stratum": stratum,
    }


def sample() -> list[dict]:
    """The candidate pairs, in a deterministic order (seeded by ``SEED``)."""
    rng = random.Random(SEED)
    docs = _load_jsonl(CORPUS)
    focus, her2neg, rct = [], [], []
    for d in docs:
        text = f"{d.get('title', '')} {d['text']}"
        if d["source"] == "pubmed" and FOCUS.search(text):
            focus += _passages(d["id"], d["text"], rng)
        elif d["source"] == "pubmed" and ON_TOPIC.search(text):
            her2neg += _passages(d["id"], d["text"], rng)
        elif d.get("topic") == BREAST_RCT:
            rct += _passages(d["id"], d["text"], rng)
    for d in _load_jsonl(SCIFACT):
        if FOCUS.search(f"{d.get('title', '')} {d['text']}"):
            focus += _passages(f"scifact:{d['_id']}", d["text"], rng)
    cue = {k: [p for p in focus if re.search(rx, p[1], re.I)] for k, rx in DRUG_CUES.items()}
    any_cue = {p[1] for pool in cue.values() for p in pool}
    plain = [p for p in focus if p[1] not in any_cue]
    neg_set = set(her2neg)
    rows: list[dict] = []
    for key, q in STORM_QUESTIONS.items():
        seen: set[str] = set()
        others = [p for k, pool in cue.items() if k != key for p in pool]
        lexical = [p for p in her2neg + rct if re.search(DRUG_CUES[key], p[1], re.I)]
        strata = [
            ("cue", _take(rng, cue[key], DRUG_CUE, seen)),
            ("other-cue", _take(rng, others, DRUG_OTHER, seen)),
            ("topic-words", _take(rng, plain, DRUG_TOPIC_N, seen)),
            ("her2-negative", _take(rng, [p for p in lexical if p in neg_set], DRUG_NEG, seen)),
            ("other-rct", _take(rng, [p for p in lexical if p not in neg_set], DRUG_RCT, seen)),
        ]
        rows += [_row(DRUG_TOPIC, key, q, d, s, name) for name, ps in strata for d, s in ps]
    for topic in GENERAL_TOPICS:
        name = f"FreshWiki: {topic}"
        pool = [
            p for d in docs if d.get("topic") == name for p in _passages(d["id"], d["text"], rng)
        ]
        for key, q in GENERAL_QUESTIONS.items():
            seen = set()
            hits = [p for p in pool if re.search(GEN_CUES[key], p[1])]
            strata = [("cue", _take(rng, hits, GEN_CUE, seen))]
            strata.append(("random", _take(rng, pool, GEN_RANDOM, seen)))
            rows += [_row(name, key, q, d, s, st) for st, ps in strata for d, s in ps]
    # Second pass (own seed, so the rows above stay as they were labelled): the first pass gave
    # the drug questions too few positives (their cue words also match trial designs), so draw
    # passages that name a trastuzumab-based or HER2 drug together with a finding.
    rng2 = random.Random(SEED + 1)
    for key, (rx, n) in STRICT_CUES.items():
        seen = {r["passage"] for r in rows if r["question_key"] == key}
        hits = [p for p in focus if re.search(rx, p[1], re.I | re.S)]
        picks = _take(rng2, hits, n, seen)
        q = STORM_QUESTIONS[key]
        rows += [_row(DRUG_TOPIC, key, q, d, s, "strict-cue") for d, s in picks]
    # Third pass: safety and efficacy still lacked positives; any passage of a trastuzumab
    # document with a safety or outcome word and a number.
    rng3 = random.Random(SEED + 2)
    for key, (rx, n) in LOOSE_CUES.items():
        seen = {r["passage"] for r in rows if r["question_key"] == key}
        hits = [p for p in focus if re.search(rx, p[1], re.I | re.S) and re.search(r"\d", p[1])]
        picks = _take(rng3, hits, n, seen)
        q = STORM_QUESTIONS[key]
        rows += [_row(DRUG_TOPIC, key, q, d, s, "loose-cue") for d, s in picks]
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise RuntimeError("duplicate pair ids in the sample")
    return rows


def read_judgements(path: Path = JUDGEMENTS) -> dict[str, tuple[bool, str]]:
    """``id → (answers, note)`` from the TSV of hand judgements (``#`` lines are comments)."""
    out: dict[str, tuple[bool, str]] = {}
    with path.open(encoding="utf-8") as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
            if not row or row[0].startswith("#"):
                continue
            if len(row) < 2 or row[1] not in ("0", "1"):
                raise ValueError(f"{path}:{n}: want 'id<TAB>1|0<TAB>note', got {row!r}")
            out[row[0]] = (row[1] == "1", row[2] if len(row) > 2 else "")
    return out


def build() -> list[dict]:
    """Candidates joined with their judgements; raises ``ValueError`` naming unjudged ids."""
    cands = _load_jsonl(CANDIDATES)
    judged = read_judgements()
    missing = [c["id"] for c in cands if c["id"] not in judged]
    if missing:
        raise ValueError(f"{len(missing)} candidates have no judgement, e.g. {missing[:5]}")
    out = []
    for c in cands:
        answers, note = judged[c["id"]]
        row = {k: v for k, v in c.items() if k != "stratum"}
        out.append({**row, "answers": answers, "note": note or c["stratum"]})
    return out


def _write(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main(argv: list[str] | None = None) -> int:
    """CLI: ``sample`` writes the candidates, ``build`` writes the labelled set."""
    ap = argparse.ArgumentParser(prog="python -m bench.evidence_sample")
    ap.add_argument("step", choices=("sample", "build"))
    args = ap.parse_args(argv)
    if args.step == "sample":
        rows = sample()
        _write(rows, CANDIDATES)
        print(f"{len(rows)} candidates → {CANDIDATES}")
    else:
        rows = build()
        _write(rows, LABELS)
        pos = sum(r["answers"] for r in rows)
        print(f"{len(rows)} pairs, {pos} positive ({pos / len(rows):.0%}) → {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
