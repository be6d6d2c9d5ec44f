"""research.ui.citations: safe Markdown from source/model text and [n] → #ref-n links."""

from __future__ import annotations

import pytest

from research.models import Reference, Report, ReportSection, TurnSource
from research.ui import citations as c


def test_plain_escapes_markdown_and_html_and_flattens():
    out = c.plain("<script>alert(1)</script>\n*bold* [x](javascript:y) $5")
    assert "<" not in out.replace("\\<", "") and ">" not in out.replace("\\>", "")
    assert "\\*bold\\*" in out and "\\[x\\]" in out and "\\$5" in out
    assert "\n" not in out
    assert c.plain(None) == ""


def test_safe_markdown_neutralizes_html_and_math_keeps_markdown():
    out = c.safe_markdown('**Key** <img src=x onerror="alert(1)"> costs $5 to $10 & more [2]')
    assert "<img" not in out and "&lt;img" in out
    assert "\\$5" in out and "\\$10" in out
    assert "**Key**" in out and "&amp; more" in out and "[2]" in out


def test_code_span():
    assert c.code("a `b` c") == "`a 'b' c`"
    assert c.code("") == ""


@pytest.mark.parametrize(
    "url,expected",
    [
        ("https://pubmed.ncbi.nlm.nih.gov/123/", "https://pubmed.ncbi.nlm.nih.gov/123/"),
        ("http://x.org/a b(c)", "http://x.org/a%20b%28c%29"),
        ("javascript:alert(1)", None),
        ("data:text/html,<b>", None),
        ("/relative/path", None),
        ("", None),
        (None, None),
    ],
)
def test_safe_url(url, expected):
    assert c.safe_url(url) == expected


def test_link_citations_links_valid_only_and_is_idempotent():
    text = "HER2 is amplified [1][2]. Survival improved [3]. See [9] and [2](http://x)."
    out = c.link_citations(text, 3)
    assert "[[1]](#ref-1)[[2]](#ref-2)" in out
    assert "[[3]](#ref-3)" in out
    assert "[9]" in out and "#ref-9" not in out  # out of range left alone
    assert "[2](http://x)" in out  # an existing link untouched
    assert c.link_citations(out, 3) == out


def test_anchor_html_has_no_text_and_rejects_bad_numbers():
    assert c.anchor_html(7) == '<a id="ref-7"></a>'
    for bad in (0, -1, "3", True):
        with pytest.raises(ValueError):
            c.anchor_id(bad)


def test_reference_markdown_escapes_title_and_drops_unsafe_url():
    ref = Reference(
        number=2,
        source_id="src_001",
        title="Trastuzumab <b>[RCT]</b>",
        url="javascript:evil()",
        source_type="pubmed",
        external_id="PMID:123",
    )
    out = c.reference_markdown(ref)
    assert out.startswith("**\\[2\\]** ")
    assert "javascript" not in out and "<b>" not in out
    assert "pubmed" in out and "PMID\\:123" in out
    ok = ref.model_copy(update={"url": "https://pubmed.ncbi.nlm.nih.gov/123/", "title": "A trial"})
    assert "[A trial](https://pubmed.ncbi.nlm.nih.gov/123/)" in c.reference_markdown(ok)


def test_source_markdown():
    src = TurnSource(
        n=3,
        source_id="src_004",
        title="NCT01 trial",
        url="https://clinicaltrials.gov/x",
        source_type="clinicaltrials.gov",
        external_id="NCT01",
    )
    out = c.source_markdown(src)
    assert out.startswith("**\\[3\\]** NCT01 trial")
    assert "[link](https://clinicaltrials.gov/x)" in out


def test_report_body_markdown_links_and_escapes():
    report = Report(
        title="T",
        lead="Lead cites [1].",
        sections=[
            ReportSection(heading="Efficacy <i>", text="Benefit [2] <script>x</script> at $3 [5]."),
            ReportSection(heading="Safety", text="Cardiotoxicity [1]."),
        ],
        references=[
            Reference(
                number=i, source_id=f"src_{i}", title=f"t{i}", url="https://a.b", source_type="web"
            )
            for i in (1, 2)
        ],
        markdown="",
    )
    body = c.report_body_markdown(report)
    assert body.startswith("Lead cites [[1]](#ref-1).")
    assert "## Efficacy \\<i\\>" in body and "## Safety" in body
    assert "[[2]](#ref-2)" in body and "&lt;script&gt;" in body and "\\$3" in body
    assert "[5]" in body and "#ref-5" not in body
