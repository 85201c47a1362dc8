"""The second judge's review of the audit: the blind sample, Cohen's kappa and the agreement of two judges, on
items of our own; the committed second judgements against the audit set."""
from __future__ import annotations

import random

import pytest

from nlivis.analysis.audit import Drawn
from nlivis.analysis.audit_review import agreement, cohen_kappa, review_sample
from nlivis.data.audit_set import AUDIT_FOLDER, AuditItem, Judgement, read_audit_file
from nlivis.workflows.audit import read_judged
from tests.conftest import load_script

def _drawn(index: int) -> Drawn:
    return Drawn("synonym", f"snli_dev:{index}", f"{index:012x}", "h1 a → b (synonym)", "label entailment",
                 "P", "H", ("P", "P"), "entailment")


def _judged(index: int, right: bool | None, grammatical: bool = True) -> AuditItem:
    item = _drawn(index)
    return AuditItem(item.stratum, item.source, item.fingerprint, item.change, item.expects,
                     Judgement(grammatical, right, None if right is not False else "neutral", ""))


def test_cohen_kappa_has_its_textbook_value_and_none_where_chance_explains_everything():
    """20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: observed 0.7, chance 0.5 → κ 0.4 (the standard example)."""
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([(True, True)] * 9) is None  # both said yes to everything: chance agreement is 1
    assert cohen_kappa([]) is None
    assert cohen_kappa([(True, False), (False, True)]) == pytest.approx(-1.0)


def test_the_blind_sample_takes_judged_label_claims_only_and_does_not_depend_on_their_order():
    drawn = [_drawn(i) for i in range(40)]
    judged = [_judged(i, right=i % 3 != 0) for i in range(0, 30)] + [_judged(i, right=None) for i in range(30, 35)]
    sample = review_sample(drawn, judged, 12, seed=7)
    assert len(sample) == 12 and len({item.key for item in sample}) == 12
    assert all(int(item.source.split(":")[1]) < 30 for item in sample)  # no unjudged item, no claim-free one
    shuffled = drawn[:]
    random.Random(1).shuffle(shuffled)
    assert review_sample(shuffled, judged[::-1], 12, seed=7) == sample
    assert review_sample(drawn, judged, 12, seed=8) != sample  # the seed draws another sample
    assert len(review_sample(drawn, judged, 100, seed=7)) == 30


def test_agreement_counts_each_answer_and_names_the_disagreements():
    first = [_judged(0, True), _judged(1, True), _judged(2, False), _judged(3, True, grammatical=False),
             _judged(4, None)]
    second = [_judged(0, True), _judged(1, False), _judged(2, False), _judged(3, True), _judged(4, None),
              _judged(9, True)]
    result = agreement(first, second)
    assert result["items"] == 5 and result["unknown_to_first"] == 1
    assert result["label"] | {"kappa": None} == {"both_right": 2, "both_wrong": 1, "first_only_right": 1,
                                                 "second_only_right": 0, "agree": 3, "of": 4, "kappa": None}
    assert result["label"]["kappa"] == pytest.approx((0.75 - (0.75 * 0.5 + 0.25 * 0.5)) / (1 - 0.5))
    assert result["label_disagreements"] == [list(_drawn(1).key)]
    assert result["grammar_disagreements"] == [list(_drawn(3).key)]
    assert result["grammatical"]["agree"] == 4


def test_the_comparison_prints_one_markdown_row():
    script = load_script("audit_review")
    lines = script.comparison_table(agreement([_judged(0, True), _judged(1, False)],
                                              [_judged(0, True), _judged(1, True)]))
    assert len(lines) == 3 and lines[2].startswith("| 2 | 1 | 0 | 0 | 1 | 1/2 |")


def test_every_second_judgement_is_of_an_item_the_audit_set_judged_too():
    """The second judge judged a sample of the audit set's items (and one stratum whole): each of its lines names
    one of them."""
    second = [item for path in sorted(AUDIT_FOLDER.glob("second_judge*.jsonl")) for item in read_audit_file(path)]
    if not second:
        pytest.skip(f"{AUDIT_FOLDER} holds no second judgement yet")
    judged = {item.key for items in read_judged().values() for item in items}
    assert all(item.key in judged for item in second)
