"""A comparison that no source makes: the report says so and quotes what each arm did in trials
of its own, labelled as an indirect comparison, and the question stays open."""

from __future__ import annotations

import json

import pytest

from research import jobs
from research.evidence.indirect import arm_results, one_arm
from research.followup.audit import on_question
from research.followup.corpus import EvidenceDoc
from research.models import Question, Report, SearchResult, SourceRecord
from research.pipeline.statements import unmet_statement
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.text.vectors import Vectors

TOPIC = "Examplumab versus belzumab for examplitis in adults"
EFFICACY = Question(
    key="efficacy.comparison",
    label="Efficacy: examplumab vs belzumab",
    description="Remission and relapse with examplumab compared with belzumab in examplitis",
    min_sources=5,
)


@pytest.fixture(scope="module")
def vectors() -> Vectors:
    return Vectors()


def result(title: str, text: str, n: int) -> SearchResult:
    return SearchResult(
        url=f"https://example.org/{n}",
        title=title,
        text=f"{title} {text}",
        source_type="pubmed",
        external_id=f"PMID:{n}",
    )


BELZ = result(
    "Belzumab for examplitis in adults: a randomised placebo-controlled trial",
    "Adults with examplitis were randomly assigned to belzumab or placebo for 12 weeks. "
    "Remission of examplitis was more frequent with belzumab than with placebo (41% vs 18%; "
    "P<0.001). The trial was run at 20 centres.",
    1,
)
EXAM = result(
    "Examplumab versus methotrexate in adults with examplitis",
    "Adults with examplitis were randomised to examplumab or methotrexate. "
    "Examplumab reduced examplitis flares by 35% compared with methotrexate in adults. "
    "The trial was run at 12 centres.",
    2,
)
OTHER_CONDITION = result(
    "Belzumab for psoriasis in adults: a randomised trial",
    "Belzumab cleared psoriasis in 60% of adults compared with 20% on placebo.",
    3,
)
PROTOCOL = result(
    "Belzumab for examplitis in adults: study protocol for a randomised controlled trial",
    "This trial will compare belzumab with placebo in adults with examplitis. "
    "Remission of examplitis will be the primary outcome.",
    4,
)


def test_a_trial_of_one_arm_alone_is_indirect_evidence_for_that_arm():
    assert one_arm(BELZ, TOPIC) == 1
    assert one_arm(EXAM, TOPIC) == 0
    # about another condition, or a protocol with no results: no evidence of either arm
    assert one_arm(OTHER_CONDITION, TOPIC) is None
    assert one_arm(PROTOCOL, TOPIC) is None
    # a question that compares nothing has no indirect evidence
    assert one_arm(BELZ, "Belzumab for examplitis in adults") is None


def test_each_arm_is_quoted_with_a_result_that_names_it(vectors):
    found = arm_results(vectors, TOPIC, EFFICACY, [BELZ, EXAM, OTHER_CONDITION, PROTOCOL])
    assert [f.arm for f in found] == [0, 1]
    assert "examplumab" in found[0].passage.passage.lower()
    assert "belzumab" in found[1].passage.passage.lower()
    assert "12 centres" not in found[0].passage.passage  # how a trial was run is no result
    # a passage another section quotes already is not quoted again
    again = arm_results(
        vectors, TOPIC, EFFICACY, [BELZ, EXAM], frozenset(f.passage.passage for f in found)
    )
    assert all(f.passage.passage not in {x.passage.passage for x in found} for f in again)


def test_the_open_question_says_its_quotes_are_an_indirect_comparison():
    said = unmet_statement(EFFICACY, 0, None, True, 2)
    assert said.startswith("Efficacy: examplumab vs belzumab is not answered")
    assert said.endswith(
        "only trials of each arm against another comparator (an indirect comparison); "
        "what they report follows."
    )
    # without indirect evidence the statement is as before
    assert unmet_statement(EFFICACY, 0, None, False).endswith("in examplitis.")


def test_the_audit_counts_a_trial_of_either_arm_as_on_the_question():
    doc = EvidenceDoc(
        source=SourceRecord(
            source_id="src_001",
            citation_id="cit_1",
            source_type="pubmed",
            external_id="PMID:1",
            url=BELZ.url,
            title=BELZ.title,
        ),
        text=BELZ.text,
        from_artifact=True,
    )
    assert on_question(doc, TOPIC)
    off = EvidenceDoc(
        source=doc.source.model_copy(update={"title": OTHER_CONDITION.title}),
        text=OTHER_CONDITION.text,
        from_artifact=True,
    )
    assert not on_question(off, TOPIC)


HOT_FLASH_IDS = {
    "pubmed:16139656",  # gabapentin against placebo
    "pubmed:17229772",  # venlafaxine against clonidine
    "pubmed:18670875",  # venlafaxine against clonidine
    "pubmed:24022390",  # hypnotherapy against gabapentin
}


@pytest.fixture(scope="module")
def hot_flash_corpus(corpus_path, tmp_path_factory):
    """The trials of two medicines that no trial of the corpus compares, and forty other
    documents of the shared corpus."""
    docs, others = [], []
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["id"] in HOT_FLASH_IDS:
                docs.append(line)
            elif d["source"] == "pubmed" and len(others) < 40:
                others.append(line)
    corpus = tmp_path_factory.mktemp("hot_flashes") / "corpus.jsonl"
    corpus.write_text("".join(docs + others), encoding="utf-8")
    return corpus


@pytest.fixture(scope="module", params=["storm", "costorm"])
def no_head_to_head(request, redis_server, hot_flash_corpus, tmp_path_factory):
    """A run on the two medicines, in each mode."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(tmp_path_factory.mktemp("hot_flashes_data")))
    mp.setenv("REDIS_URL", redis_server)
    state = jobs.run_foreground(
        jobs.make_config(
            "Venlafaxine versus gabapentin for hot flashes in breast cancer survivors",
            corpus=str(hot_flash_corpus),
            max_perspectives=2,
            max_turns=1,
            mode=request.param,
        )
    )
    report = RunStore(get_redis()).get_doc(state.run_id, "report", Report)
    yield state, report
    mp.undo()


@pytest.mark.slow
def test_a_comparison_no_trial_makes_reports_each_arm_on_its_own(no_head_to_head):
    state, report = no_head_to_head
    assert state.status == "complete", state.error
    assert report is not None
    assert report.lead.startswith(
        "No source found compares venlafaxine with gabapentin directly; trials of each against "
        "another comparator report the following."
    )
    cited = {r.external_id for r in report.references}
    # the comparator's own trial is quoted: the conversations' gate keeps it out of the evidence
    assert "PMID:16139656" in cited
    # ... and counts for no question: a trial of one arm does not answer "A versus B", in
    # either mode (a Co-STORM expert's sources count where the judgement finds a passage)
    assert jobs.run_summary(state.run_id)["questions"]["efficacy.comparison"] == 0
    efficacy = next(q for q in report.questions if q.key == "efficacy.comparison")
    assert efficacy.status != "answered" and efficacy.sources_found == 0
    section = next(s for s in report.sections if s.heading.startswith("Efficacy"))
    assert "(an indirect comparison)" in section.text
