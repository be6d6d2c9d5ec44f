"""Key phrases of texts: RAKE candidates ranked by class-based TF-IDF.

Key-phrase candidates follow RAKE (Rose et al. 2010, "Automatic keyword extraction from
individual documents", §1.2): maximal runs of content words between stop words and punctuation;
ranking across groups is class-based TF-IDF (c-TF-IDF, as in Grootendorst 2022, BERTopic §3.3),
counted with scikit-learn's ``CountVectorizer``.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from research.text.sentences import split_sentences
from research.text.words import CITE, STOP, WEAK_HEAD, word_key

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-']*[A-Za-z0-9+]|[A-Za-z0-9]|[^\sA-Za-z0-9]")

_VERBISH = re.compile(r"[a-z]{3,}(?:ed|ing)$")


def _is_content(tok: str) -> bool:
    low = tok.lower()
    if low in STOP or not re.match(r"[a-z0-9]", low) or not re.search(r"[a-z]", low):
        return False
    return len(low) >= 3 or bool(re.search(r"\d", low) and re.search(r"[a-z]", low))


def candidate_phrases(text: str, max_words: int = 4) -> list[tuple[str, str]]:
    """RAKE candidates: ``(key, surface)`` for each run of content words (1–``max_words`` long).

    Longer runs are skipped (their fragments make poor names); trailing verb forms (-ed, -ing)
    are trimmed; phrases made only of ``WEAK_HEAD`` nouns are dropped. ``key`` is lower case.
    """
    out: list[tuple[str, str]] = []
    for sentence in split_sentences(text, min_words=1) or [text]:
        run: list[str] = []
        for tok in [*_TOKEN.findall(CITE.sub(" ", sentence)), "."]:
            if _is_content(tok):
                run.append(tok)
                continue
            if run:
                for g in [run] if len(run) <= max_words else []:
                    while len(g) > 1 and (_VERBISH.search(g[-1]) or g[-1].lower().endswith("ly")):
                        g = g[:-1]  # "kidney disease treated" -> "kidney disease"
                    while (
                        len(g) > 2 and _VERBISH.search(g[0]) or len(g) > 1 and g[0].endswith("ing")
                    ):
                        g = g[1:]  # "assessed renal safety" -> "renal safety"
                    if all(w.lower() in WEAK_HEAD for w in g) or (
                        len(g) == 1 and _VERBISH.search(g[0])
                    ):
                        continue
                    out.append((" ".join(w.lower() for w in g), " ".join(g)))
            run = []
    return out


def ranked_phrases(
    groups: list[str],
    top: int = 5,
    exclude: set[str] | frozenset = frozenset(),
) -> list[list[str]]:
    """Top key phrases per text group, as surface strings (most frequent surface form).

    Score: c-TF-IDF (term frequency within the group × log(1 + mean group size / frequency over
    all groups)), × 1.25 per extra word (multi-word phrases name things better). A phrase whose
    words are all in ``exclude`` (e.g. the topic's words) is skipped. Ties break
    alphabetically, so the result is deterministic. ``exclude`` holds ``word_key`` forms.

    Returns:
        One list per group (possibly empty).
    """
    if not groups:
        return []
    surfaces: dict[str, Counter] = {}

    def analyzer(doc: str) -> list[str]:
        keys = []
        for key, surface in candidate_phrases(doc):
            if {word_key(w) for w in key.split()} <= exclude:
                continue
            surfaces.setdefault(key, Counter())[surface] += 1
            keys.append(key)
        return keys

    from sklearn.feature_extraction.text import CountVectorizer  # noqa: PLC0415 - ~3 s package init

    vec = CountVectorizer(analyzer=analyzer)
    try:
        counts = vec.fit_transform(groups).toarray().astype(float)
    except ValueError:  # empty vocabulary
        return [[] for _ in groups]
    vocab = vec.get_feature_names_out()
    tf = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    avg = counts.sum() / len(groups)
    idf = np.log(1.0 + avg / np.maximum(counts.sum(axis=0), 1.0))
    length_bonus = np.array([1.25 ** (len(k.split()) - 1) for k in vocab])
    score = tf * idf * length_bonus * (counts > 0)
    out = []
    for row in score:
        order = sorted(
            (i for i in np.flatnonzero(row > 0)), key=lambda i: (-round(row[i], 9), vocab[i])
        )
        picked: list[str] = []
        for i in order:
            surface = max(surfaces[vocab[i]].items(), key=lambda kv: (kv[1], kv[0]))[0]
            picked.append(surface)
            if len(picked) >= top:
                break
        out.append(picked)
    return out
