"""The audit: its file reader (strict, property-tested), its statistics, the command, and the draw on pairs of
our own. The floors against the committed judgements are tests/test_audit_floors.py."""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlivis.analysis.audit import (EDIT_STRATA, FLOOR_MIN_CASES, Drawn, audit_summary, draw_edits,
                                   expects_of, fingerprint, floor_problems, pending_items, share, visiting_order)
from nlivis.cli import build_parser, main
from nlivis.cli.audit import format_audit_table
from nlivis.data.audit_set import (AUDIT_FOLDER, EDITS_FILE, PROBES_FILE, TEMPLATE_SOURCE, AuditItem, Judgement,
                                   audit_line, parse_audit_line, read_audit_file)
from nlivis.data.records import NLI_LABELS, Pair
from nlivis.workflows.audit import AuditRun, run_audit

EXAMPLES = settings(max_examples=int(os.environ.get("NLIVIS_PROPERTY_EXAMPLES", "120")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------------------------------ the reader

words = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(str.strip)
hex_digits = st.text(alphabet="0123456789abcdef", min_size=12, max_size=12)
expectations = st.sampled_from(["none", "invariant", "label entailment", "label contradiction",
                                "direction entailment not_fall", "direction contradiction fall"])


@st.composite
def audit_items(draw) -> AuditItem:
    expects = draw(expectations)
    template = draw(st.booleans())
    if expects == "none":
        judgement = Judgement(draw(st.booleans()), None, None, draw(st.text(max_size=40)))
    else:
        right = draw(st.booleans())
        correct = None if right else draw(st.sampled_from((None, *NLI_LABELS)))
        judgement = Judgement(draw(st.booleans()), right, correct, draw(st.text(max_size=40)))
    source = TEMPLATE_SOURCE if template else f"snli_dev:{draw(st.integers(1, 10_000))}"
    texts = (draw(words), draw(words)) if template else (None, None)
    return AuditItem(draw(words), source, draw(hex_digits), draw(words), expects, judgement, *texts)


@EXAMPLES
@given(item=audit_items())
def test_every_item_reads_back_as_written(item):
    assert parse_audit_line(audit_line(item), "here") == item


@EXAMPLES
@given(item=audit_items(), key=st.sampled_from(["stratum", "fingerprint", "grammatical", "label_right", "change",
                                                "correct_label", "premise", "note"]),
       value=st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
def test_a_damaged_line_is_refused_naming_file_and_line(tmp_path, item, key, value):
    data = json.loads(audit_line(item))
    data[key] = value
    path = tmp_path / "judged.jsonl"
    path.write_text(audit_line(item) + "\n" + json.dumps(data) + "\n", encoding="utf-8")
    try:
        items = read_audit_file(path)
    except ValueError as error:
        assert f"{path}, line 2:" in str(error)
    else:  # the damage happened to leave a valid item (another note, a text for a template …), never a third one
        assert len(items) == 2 and items[0] == item and items[1].key != item.key


@EXAMPLES
@given(text=st.text(max_size=200))
def test_any_text_is_items_or_one_error_naming_the_file(tmp_path, text):
    path = tmp_path / "any.jsonl"
    path.write_text(text, encoding="utf-8")
    try:
        read_audit_file(path)
    except ValueError as error:
        assert str(path) in str(error) and ", line " in str(error)


def judged(expects="label entailment", right=True, **changes) -> AuditItem:
    item = AuditItem("synonym", "snli_dev:7", "0123456789ab", "hypothesis h3 a → b (synonym)", expects,
                     Judgement(True, None if expects == "none" else right, None))
    return replace(item, **changes)


@pytest.mark.parametrize("changes, problem", [
    ({"label_right": None}, "label_right must be true or false"),
    ({"expects": "none"}, "an item that expects none has null label_right"),
    ({"correct_label": "neutral"}, "correct_label must be null when label_right is true"),
    ({"label_right": False, "correct_label": "maybe"}, "correct_label must be null or one of"),
    ({"premise": "A dog runs."}, "only template items keep text"),
    ({"source": "template"}, "a template item keeps its premise and hypothesis"),
    ({"fingerprint": "XYZ"}, "fingerprint must be 12 lower-case hex digits"),
    ({"grammatical": "yes"}, "grammatical must be true or false"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"note": "x" * 201}, "note has 201 characters"),
])
def test_the_reader_says_what_is_wrong(changes, problem):
    data = {**json.loads(audit_line(judged())), **changes}
    with pytest.raises(ValueError, match="judged.jsonl, line 3: " + problem.replace("(", r"\(").replace(")", r"\)")):
        parse_audit_line(json.dumps(data), "judged.jsonl, line 3")


def test_an_item_judged_twice_is_refused(tmp_path):
    path = tmp_path / "twice.jsonl"
    path.write_text(audit_line(judged()) + "\n\n" + audit_line(judged(right=False)) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"twice.jsonl, line 3: .* judged already on line 1"):
        read_audit_file(path)


def test_the_committed_audit_set_reads_and_holds_no_dev_sentence():
    for name in (EDITS_FILE, PROBES_FILE):
        items = read_audit_file(AUDIT_FOLDER / name)
        assert items, name
        assert all(item.premise is None for item in items if item.source != TEMPLATE_SOURCE)


# ------------------------------------------------------------------------------------------ statistics

def drawn(stratum="synonym", source="snli_dev:7", expects="label entailment", text="x") -> Drawn:
    return Drawn(stratum, source, fingerprint(text, text, expects), "h1 a → b", expects, text, text, None, None)


def judgement_of(item: Drawn, grammatical=True, right=True) -> AuditItem:
    label_right = None if item.expects == "none" else right
    return AuditItem(item.stratum, item.source, item.fingerprint, item.change, item.expects,
                     Judgement(grammatical, label_right, None))


def test_share_is_a_rate_with_its_wilson_interval():
    assert share(0, 0) == {"right": 0, "of": 0, "rate": None, "interval": None}
    found = share(29, 30)
    assert found["rate"] == round(29 / 30, 6) and found["interval"][0] < found["rate"] < found["interval"][1]
    assert share(30, 30)["interval"][1] == 1.0


def test_only_drawn_judged_items_count_and_the_rest_is_pending_or_stale():
    items = [drawn(text=str(i)) for i in range(4)] + [drawn(expects="none", text="n")]
    judgements = [judgement_of(items[0]), judgement_of(items[1], grammatical=False, right=False),
                  judgement_of(items[4]), judgement_of(drawn(text="gone"))]
    summary = audit_summary(items, judgements, "by_kind")
    assert (summary["judged"], summary["drawn"], summary["pending"], summary["stale"]) == (3, 5, 2, 1)
    assert summary["label_precision"]["right"] == 1 and summary["label_precision"]["of"] == 2
    assert summary["grammatical"]["right"] == 2 and summary["grammatical"]["of"] == 3
    assert summary["by_kind"]["synonym"]["drawn"] == 5
    assert pending_items(items, judgements) == items[2:4]


def test_a_changed_edit_is_pending_and_its_old_judgement_stale():
    before = drawn(text="old")
    after = replace(before, fingerprint=fingerprint("new", "new", before.expects))
    summary = audit_summary([after], [judgement_of(before)], "by_kind")
    assert (summary["judged"], summary["pending"], summary["stale"], summary["no_longer_proposed"]) == (0, 1, 1, 1)
    still = audit_summary([after], [judgement_of(before)], "by_kind", proposed={before.key})
    assert (still["stale"], still["no_longer_proposed"]) == (1, 0)


def test_floors_apply_from_thirty_items_and_name_the_stratum():
    items = [drawn(text=str(i)) for i in range(FLOOR_MIN_CASES)]
    one_wrong = [judgement_of(item, right=i > 0) for i, item in enumerate(items)]
    tally = audit_summary(items, one_wrong, "by_kind")["by_kind"]["synonym"]
    assert tally["below_floor"] == ["synonym: label precision 96.7% (29 of 30) is below its floor 97%"]
    few = audit_summary(items[:29], one_wrong[:29], "by_kind")["by_kind"]["synonym"]
    assert few["below_floor"] == [] and floor_problems("x", few) == []


def test_expects_names_the_expectation():
    assert expects_of(None, None, None) == "none"
    assert expects_of("invariant", None, None) == "invariant"
    assert expects_of("direction", "entailment", "not_fall") == "direction entailment not_fall"


def test_the_visiting_order_depends_on_the_seed_only():
    pairs = [("snli_dev", SimpleNamespace(id=str(i))) for i in range(50)]
    assert visiting_order(pairs, 28) == visiting_order(list(reversed(pairs)), 28)
    assert visiting_order(pairs, 28) != visiting_order(pairs, 29)


# ------------------------------------------------------------------------------------------ the command

def test_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["audit", "--help"])
    text = capsys.readouterr().out
    for flag in ("--data-dir", "--section", "--json", "--markdown", "--pending"):
        assert flag in text
    assert "Wilson" in text


def test_a_missing_snli_dev_is_one_clear_error(tmp_path, capsys):
    assert main(["audit", "--data-dir", str(tmp_path), "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"].startswith(f"--data-dir {tmp_path}: no SNLI dev under it")


def test_the_table_shows_each_stratum_and_the_whole():
    items = [drawn(text=str(i)) for i in range(3)]
    record = AuditRun({"edits": items}, {"edits": [judgement_of(items[0])]}).summary()
    table = format_audit_table(record)
    assert "synonym" in table and "all" in table and "100.0% (1/1)" in table
    assert "3 drawn, 2 waiting for a judgement, 0 judgement(s) of edits no longer drawn (0 no longer proposed)" in table
    assert format_audit_table(record, markdown=True).count("|") > 10


# ------------------------------------------------------------------------------------------ the draw

OWN_PAIRS = [("own", Pair(str(i), premise, hypothesis, label)) for i, (premise, hypothesis, label) in enumerate([
    ("A tall man is playing a guitar on the street.", "A man is playing a guitar.", "entailment"),
    ("Two women are drinking tea in a small kitchen.", "Three women are drinking coffee.", "contradiction"),
    ("A boy in a red shirt is running with his dog.", "A child is outside.", "entailment"),
    ("Some children are not sleeping in the big room.", "All children are awake.", "neutral"),
])]


def test_the_draw_is_deterministic_and_matches_judgements_by_fingerprint(tmp_path, wordnet):
    first = draw_edits(OWN_PAIRS)
    assert first == draw_edits(list(reversed(OWN_PAIRS)))
    assert {item.stratum for item in first} <= set(EDIT_STRATA) and {"swap", "negation"} <= {i.stratum for i in first}
    assert all(sum(i.stratum == "swap" and i.source == source for i in first) == 1 for source, _ in
               [(f"own:{pair.id}", pair) for _, pair in OWN_PAIRS])
    two = draw_edits(OWN_PAIRS, per_stratum=2, claims=0, fresh={})
    assert all(sum(i.stratum == s for i in two) <= 2 for s in EDIT_STRATA)
    one = draw_edits(OWN_PAIRS, per_stratum=1, claims=0, fresh={})
    one_and_fresh = draw_edits(OWN_PAIRS, per_stratum=1, claims=0, fresh={"negation": 1})
    negations = [[i for i in drawn if i.stratum == "negation"] for drawn in (one, one_and_fresh)]
    assert len(negations[0]) == 1 and len(negations[1]) == 2 and negations[1][0] == negations[0][0]
    assert negations[1][1].source != negations[1][0].source  # the next pair in the seeded order, not a new pick
    assert [i for i in one_and_fresh if i.stratum != "negation"] == [i for i in one if i.stratum != "negation"]
    topped_up = draw_edits(OWN_PAIRS, per_stratum=1, claims=3)
    for stratum in EDIT_STRATA:
        extra = [item for item in topped_up if item.stratum == stratum][1:]
        assert all(item.expects != "none" for item in extra), stratum
    (tmp_path / EDITS_FILE).write_text("\n".join(audit_line(judgement_of(item)) for item in first[:3]) + "\n",
                                       encoding="utf-8")
    gone = judgement_of(replace(first[0], fingerprint="0" * 12))
    with (tmp_path / EDITS_FILE).open("a", encoding="utf-8") as file:
        file.write(audit_line(gone) + "\n")
    run = run_audit("unused", ("edits",), tmp_path, read_dev=lambda data_dir: OWN_PAIRS)
    summary = run.summary()["edits"]
    assert (summary["judged"], summary["pending"], summary["stale"]) == (3, len(first) - 3, 1)
    assert summary["no_longer_proposed"] == 1
    assert run.pending("edits") == first[3:]
    assert {item.key for item in first if item.source == first[0].source} <= run.proposed["edits"]


def test_the_negated_copys_exclusive_object_neutrals_are_a_stratum_of_their_own(wordnet):
    """A rule of its own (`self_pairs.exclusive_in_scope`) is judged apart: its items do not change what the
    hypernym neutrals of the negated copy draw, and a default run's being without them is said."""
    from nlivis.analysis.audit import (COUNTERPARTS_OFF, NEGATED_COPY_STRATA, NEGATED_EXCLUSIVE_STRATUM,
                                       counterpart_items)
    items = counterpart_items("snli_dev:1", "A man is playing a guitar .", "entailment")
    exclusive = [item for item in items if item.stratum == NEGATED_EXCLUSIVE_STRATUM]
    assert {(item.premise, item.hypothesis) for item in exclusive} >= {
        ("A man is not playing a guitar .", "A man is not playing a violin ."),
        ("A man is not playing a violin .", "A man is not playing a guitar .")}
    assert all(item.expects == "label neutral" for item in exclusive)
    neutral = [item for item in items if item.stratum == NEGATED_COPY_STRATA[("hypothesis", "neutral")]]
    assert neutral and not any("violin" in item.premise + item.hypothesis for item in neutral)
    assert NEGATED_EXCLUSIVE_STRATUM in COUNTERPARTS_OFF
