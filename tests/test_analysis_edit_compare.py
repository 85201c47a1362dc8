"""An edited pair beside its original: token matching, the alignment difference on shared tokens, the share of an
attribution on the changed words — hand-computed values."""
from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from nlivis.analysis.edit_compare import alignment_difference, changed_share, marked, match_tokens


def test_a_substitution_keeps_its_position_and_is_marked_changed():
    match = match_tokens(["A", "tall", "man", "."], ["A", "short", "man", "."])
    assert match.shared == ((0, 0), (1, 1), (2, 2), (3, 3))
    assert match.changed == (False, True, False, False)
    assert match.changed_original == (1,) and match.changed_edited == (1,)
    assert match.unmatched_original == () and match.unmatched_edited == ()


def test_an_insertion_has_no_counterpart():
    match = match_tokens(["He", "sleeps", "."], ["He", "does", "not", "sleep", "."])
    assert match.unmatched_edited and match.changed_edited == (1, 2, 3)
    assert all(not changed for changed in match.changed)


def test_difference_on_shared_tokens_with_the_changed_token_labelled():
    before = np.array([[0.7, 0.3], [0.4, 0.6]])
    after = np.array([[0.2, 0.8], [0.5, 0.5]])
    diff = alignment_difference(before, ["a", "tall"], ["x", "y"], after, ["a", "short"], ["x", "y"])
    assert np.allclose(diff.values, [[-0.5, 0.5], [0.1, -0.1]])
    assert diff.row_labels == ["a", "tall→short"] and diff.changed_rows == [False, True]
    assert diff.col_labels == ["x", "y"] and diff.changed_cols == [False, False] and diff.left_out == []


def test_inserted_rows_are_left_out_and_said():
    before = np.array([[1.0], [0.0]])
    after = np.array([[0.5], [0.25], [0.25]])
    diff = alignment_difference(before, ["he", "sleeps"], ["x"], after, ["he", "not", "sleeps"], ["x"])
    assert diff.row_labels == ["he", "sleeps"] and np.allclose(diff.values, [[-0.5], [0.25]])
    assert diff.left_out == ["not (edited row)"]


def test_changed_share_and_rank():
    share = changed_share([1.0, -3.0], [2.0, 4.0], [1], [])  # |−3| of 10, second largest
    assert share.share == 0.3 and share.best_rank == 2 and share.tokens == 4
    assert changed_share([1.0], [1.0], [], []).share is None
    assert marked(["a", "b"], [1]) == ["a", "[b]"]


@given(st.lists(st.sampled_from("abcde"), max_size=8), st.lists(st.sampled_from("abcde"), max_size=8))
def test_matching_is_one_to_one_and_in_order(original, edited):
    match = match_tokens(original, edited)
    assert len(match.shared) == len(match.changed)
    for (i, j), changed in zip(match.shared, match.changed):
        assert (original[i] != edited[j]) == changed
    assert list(match.shared) == sorted(match.shared)
    assert len({i for i, _ in match.shared}) == len(match.shared) == len({j for _, j in match.shared})
    assert len(match.shared) + len(match.unmatched_original) == len(original)
    assert len(match.shared) + len(match.unmatched_edited) == len(edited)
