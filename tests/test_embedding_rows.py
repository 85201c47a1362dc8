"""store.embedding_rows: a shared word-vector file that extends a base gives back its rows bit for bit, and a
malformed extension is refused with a message naming the tensor."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.store.embedding_rows import EXTRA_ROWS_TENSOR, ROW_INDEX_TENSOR, rows_against_base, rows_from_base

DIM = 3


@st.composite
def base_and_rows(draw) -> tuple[torch.Tensor, torch.Tensor]:
    """A base table and a table whose rows are base rows (in any order, repeated or not) or rows of their own."""
    dtype = draw(st.sampled_from([torch.float16, torch.float32]))
    values = st.floats(-4, 4, width=16, allow_nan=False)
    base = torch.tensor(draw(st.lists(st.lists(values, min_size=DIM, max_size=DIM), max_size=8)) or [[0.0] * DIM],
                        dtype=dtype)
    picks = draw(st.lists(st.one_of(st.integers(0, base.shape[0] - 1),
                                    st.lists(values, min_size=DIM, max_size=DIM)), max_size=12))
    rows = [base[pick] if isinstance(pick, int) else torch.tensor(pick, dtype=dtype) for pick in picks]
    return base, (torch.stack(rows) if rows else torch.zeros(0, DIM, dtype=dtype))


@settings(max_examples=40, deadline=None)
@given(base_and_rows())
def test_an_extension_gives_back_the_rows_bit_for_bit_and_keeps_only_rows_the_base_lacks(pair):
    base, rows = pair
    extension = rows_against_base(rows, base)
    rebuilt = rows_from_base(base, extension)
    assert rebuilt.dtype == rows.dtype and rebuilt.shape == rows.shape
    assert torch.equal(rebuilt.view(torch.uint8), rows.view(torch.uint8))  # bits, so -0.0 and 0.0 stay apart
    known = {bytes(row.view(torch.uint8).numpy()) for row in base}
    lacking = {bytes(row.view(torch.uint8).numpy()) for row in rows} - known
    assert extension[EXTRA_ROWS_TENSOR].shape[0] == len(lacking)
    assert extension[ROW_INDEX_TENSOR].dtype == torch.int32


def test_rows_of_another_width_or_precision_cannot_extend_a_base():
    base = torch.zeros(2, DIM, dtype=torch.float16)
    with pytest.raises(ValueError, match="cannot extend"):
        rows_against_base(torch.zeros(2, DIM + 1, dtype=torch.float16), base)
    with pytest.raises(ValueError, match="cannot extend"):
        rows_against_base(torch.zeros(2, DIM), base)


@pytest.mark.parametrize("damage, message", [
    (lambda e: e.pop(ROW_INDEX_TENSOR), "has no 'row_index' tensor"),
    (lambda e: e.pop(EXTRA_ROWS_TENSOR), "has no 'extra_rows' tensor"),
    (lambda e: e.update({ROW_INDEX_TENSOR: torch.tensor([0, 3], dtype=torch.int32)}), "points outside the 3 rows"),
    (lambda e: e.update({ROW_INDEX_TENSOR: torch.tensor([-1, 0], dtype=torch.int32)}), "points outside"),
    (lambda e: e.update({ROW_INDEX_TENSOR: torch.tensor([0.0, 1.0])}), "one row of integers"),
    (lambda e: e.update({EXTRA_ROWS_TENSOR: torch.ones(1, DIM)}), "does not fit the base's rows"),
    (lambda e: e.update({EXTRA_ROWS_TENSOR: torch.ones(1, DIM + 1, dtype=torch.float16)}), "does not fit"),
])
def test_a_malformed_extension_is_refused_saying_what_is_wrong(damage, message):
    base = torch.zeros(2, DIM, dtype=torch.float16)
    extension = rows_against_base(torch.ones(2, DIM, dtype=torch.float16), base)
    assert extension[EXTRA_ROWS_TENSOR].shape[0] == 1
    damage(extension)
    with pytest.raises(ValueError, match=message):
        rows_from_base(base, extension)
