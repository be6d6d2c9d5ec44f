"""The shared text tools have one home, ``research.text``: one definition each, imported from
there by both engines, the evidence judgement, the report pipeline and follow-ups."""

import ast
from pathlib import Path

from research.text import (
    content_words,
    drug_names,
    is_whole,
    is_whole_form,
    mentions_topic,
    split_sentences,
    split_topic,
    topic_kind,
    topic_words,
    word_key,
)
from research.text.artifact_text import artifact_results, artifact_texts, source_texts
from research.text.entities import abbreviations, names_any
from research.text.vectors import Vectors

ROOT = Path(__file__).resolve().parents[1] / "research"
SHARED = {
    "split_sentences",
    "content_words",
    "word_key",
    "topic_words",
    "mentions_topic",
    "is_whole",
    "is_whole_form",
    "drug_names",
    "topic_kind",
    "split_topic",
    "source_texts",
    "artifact_texts",
    "reached_phase",
    "run_progress",
}


def test_each_shared_helper_is_defined_once():
    where: dict[str, list[str]] = {}
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in SHARED:
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {k: v for k, v in where.items() if len(v) > 1}
    assert not twice, f"defined more than once: {twice}"
    assert set(where) == SHARED


def test_no_module_imports_text_tools_from_an_engine():
    for path in ROOT.rglob("*.py"):
        src = path.read_text(encoding="utf-8")
        assert "engines.extractive.text" not in src, path
        assert "engines.extractive.vectors" not in src, path
        assert "fitting import split_topic" not in src, path


def test_helpers_behave():
    assert split_sentences("Dr. Smith found it. Then it rose 5%.") == [
        "Dr. Smith found it.",
        "Then it rose 5%.",
    ]
    # a currency sign's point abbreviates ("Rs."), it ends no sentence
    assert split_sentences("It gave ₨. 1.75 billion to relief. It cost $5 then. Then it rose.") == [
        "It gave ₨. 1.75 billion to relief.",
        "It cost $5 then.",
        "Then it rose.",
    ]
    assert word_key("HER-2") == "her2"
    assert "HER2" in content_words("HER2 status of the tumour")
    assert is_whole("Anastrozole improved disease-free survival compared with tamoxifen.")
    assert not is_whole("improved disease-free survival compared with …")
    # a page's glued join of two sentences ends the first; an initialism does not
    assert split_sentences("Cooling is not recommended.Fever fits affect 2-10% of children.") == [
        "Cooling is not recommended.",
        "Fever fits affect 2-10% of children.",
    ]
    assert len(split_sentences("See e.g.The results of the trial in many adults today.")) == 1
    # a clock time's "a.m." abbreviates: "CDT (13:28 UTC) on April 20." is no sentence of its own
    assert split_sentences(
        "A launch window opened at 8:28 a.m. CDT (13:28 UTC) on 20 April. At 08:33 it lifted off."
    ) == [
        "A launch window opened at 8:28 a.m. CDT (13:28 UTC) on 20 April.",
        "At 08:33 it lifted off.",
    ]
    # a live blog's timestamp ends a post and is no part of a sentence
    assert split_sentences(
        "The minister added that work resumed.03 Jun, 2031, 11:27 AM IST The crash killed 261 "
        "people in Examplia.05 Jun, 2031, 11:31 AM IST · At least 233 people died there."
    ) == [
        "The minister added that work resumed.",
        "The crash killed 261 people in Examplia.",
        "At least 233 people died there.",
    ]
    # a page's reference-list entry is furniture; a quotation and who said it is not
    assert not is_whole('"Examplia Floods: Leaders Pay Condolences To Victims". Example News.')
    assert is_whole('"We are devastated by the loss," said the minister of Examplia.')
    assert is_whole_form("Exemestane was given for five years after tamoxifen.")
    assert drug_names("Trastuzumab and lapatinib") == ["Trastuzumab", "lapatinib"]
    # two letters before the stem make a name too
    assert drug_names("Letrozole versus heparin") == ["Letrozole", "heparin"]
    # a document's short form of a medicine names it in its later sentences
    text = "Examplumab (EXB) was given with zoledronic acid (ZOL, 4 mg). EXB halved relapse."
    assert abbreviations(text, ["examplumab", "zoledronic"]) == ["EXB", "ZOL"]
    # a word in brackets is no short form: only one written in capitals
    assert abbreviations("Examplumab (placebo) was given.", ["examplumab"]) == []
    assert names_any("EXB halved relapse.", ["EXB"])
    assert not names_any("EXBX rose; exb fell.", ["EXB"])
    assert topic_kind("Hurricane Hilary") == "general"
    assert split_topic("Trastuzumab cardiotoxicity in HER2-positive breast cancer") == (
        "Trastuzumab",
        "cardiotoxicity",
        "HER2-positive breast cancer",
    )
    words = topic_words("tamoxifen adjuvant therapy")
    assert mentions_topic("Adjuvant tamoxifen therapy for five years", words)
    assert not mentions_topic("Adjuvant chemotherapy", words)
    assert artifact_results({"results": [{"url": "u"}, 3]}) == [{"url": "u"}]
    assert artifact_results({"url": "u", "text": "t"}, single=True) == [{"url": "u", "text": "t"}]
    assert callable(source_texts) and callable(artifact_texts) and Vectors
