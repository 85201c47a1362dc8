"""scripts/sense_in_context.py: the margin rule it measures and its word split."""
from __future__ import annotations

from tests.conftest import load_script


def test_a_replacement_is_kept_where_a_sense_it_holds_for_scores_within_the_margin():
    kept = load_script("sense_in_context").kept
    scores = [(1.10, False), (1.02, True), (0.70, True)]
    assert not kept(scores, 0.0)
    assert not kept(scores, 0.05)
    assert kept(scores, 0.1)
    assert kept([(0.9, True), (0.8, False)], 0.0)
    assert not kept([(0.9, False)], 1.0)


def test_sentences_are_split_into_words_and_punctuation():
    assert load_script("sense_in_context").words_of("A man's dog, running.") == ["A", "man's", "dog", ",", "running", "."]
