"""Citation integrity: local → draft → final numbering."""

from research import citations as c


def test_local_to_draft_drops_unknown_numbers():
    text = "A is true [1]. B holds [2][7]. C [1][1]."
    out = c.local_to_draft(text, {1: "src_004", 2: "src_001"})
    assert out == "A is true [@src_004]. B holds [@src_001]. C [@src_004]."


def test_renumber_by_first_appearance_and_drops_invalid():
    lead = "Lead cites [@src_009] and [@src_002]."
    sec = "Body [@src_002] then [@src_005] and a bogus [@src_999]."
    texts, order = c.renumber([lead, sec], {"src_009", "src_002", "src_005"})
    assert order == ["src_009", "src_002", "src_005"]
    assert texts == ["Lead cites [1] and [2].", "Body [2] then [3] and a bogus ."]
    assert c.check_integrity("\n".join(texts), len(order)) == []


def test_check_integrity_flags_out_of_range_gaps_and_order():
    assert c.check_integrity("a [1] b [3]", 2)  # out of range + [2] never cited
    assert c.check_integrity("a [2] b [1]", 2)  # not first-appearance order
    assert c.check_integrity("a [1] b [2] c [1]", 2) == []


def test_cited_spans_pairs_text_with_its_markers():
    spans = c.cited_spans("HER2 is amplified in 20% of tumours [1][3]. Trastuzumab binds HER2 [2].")
    assert spans == [
        ("HER2 is amplified in 20% of tumours", [1, 3]),
        ("Trastuzumab binds HER2", [2]),
    ]
