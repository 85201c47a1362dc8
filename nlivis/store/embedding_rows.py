"""Frozen word vectors stored as another shared file's rows plus a few of their own.

Two vocabularies of one source often differ by a few words (a protocol that gained report splits, a second
seed whose unknown words were drawn again), and a frozen row is the same bits in both. A shared embedding file
may therefore *extend* a base file: it holds `row_index` (int32, one entry per vocabulary word, an index into
the base's rows followed by its own) and `extra_rows` (the rows the base does not hold, bit for bit), and
config.json names the base beside it (`embeddings.base.file`, `embeddings.base.sha256`). The rows are
`cat(base, extra_rows)[row_index]`, the same bits as the full table, so a checkpoint predicts exactly as it did.
"""
from __future__ import annotations

from typing import Mapping

import torch

ROW_INDEX_TENSOR = "row_index"
EXTRA_ROWS_TENSOR = "extra_rows"


def rows_against_base(rows: torch.Tensor, base: torch.Tensor) -> dict[str, torch.Tensor]:
    """The extension of `base` that gives back `rows` bit for bit: each row found in `base` (or already among
    the extra rows) is referenced, every other row is kept once."""
    if rows.dim() != 2 or base.dim() != 2 or rows.shape[1] != base.shape[1] or rows.dtype != base.dtype:
        raise ValueError(f"rows {tuple(rows.shape)} {rows.dtype} cannot extend a base of {tuple(base.shape)} {base.dtype}")
    where: dict[bytes, int] = {}
    for position, row in enumerate(base.contiguous().view(torch.uint8).numpy()):
        where.setdefault(row.tobytes(), position)
    extra: list[int] = []
    index = []
    for position, row in enumerate(rows.contiguous().view(torch.uint8).numpy()):
        key = row.tobytes()
        if key not in where:
            where[key] = base.shape[0] + len(extra)
            extra.append(position)
        index.append(where[key])
    return {ROW_INDEX_TENSOR: torch.tensor(index, dtype=torch.int32),
            EXTRA_ROWS_TENSOR: rows[extra].clone().contiguous()}


def rows_from_base(base: torch.Tensor, extension: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The full table an extension describes; a malformed extension raises ValueError saying what is wrong."""
    missing = [name for name in (ROW_INDEX_TENSOR, EXTRA_ROWS_TENSOR) if name not in extension]
    if missing:
        raise ValueError(f"has no {' or '.join(map(repr, missing))} tensor")
    index, extra = extension[ROW_INDEX_TENSOR], extension[EXTRA_ROWS_TENSOR]
    if index.dim() != 1 or index.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{ROW_INDEX_TENSOR!r} must be one row of integers, not {tuple(index.shape)} {index.dtype}")
    if base.dim() != 2 or extra.dim() != 2 or extra.shape[1] != base.shape[1] or extra.dtype != base.dtype:
        raise ValueError(f"{EXTRA_ROWS_TENSOR!r} {tuple(extra.shape)} {extra.dtype} does not fit the base's rows "
                         f"{tuple(base.shape)} {base.dtype}")
    available = base.shape[0] + extra.shape[0]
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= available):
        raise ValueError(f"{ROW_INDEX_TENSOR!r} points outside the {available} rows of the base and the extension")
    return torch.cat([base, extra])[index.long()]
