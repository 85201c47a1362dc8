"""What a model is made of and what it traces (`python -m nlivis inspect`), and a random batch for tests.

The model is built at its config's paper size (the [model] table, without [shipped] overrides) with
300-d word vectors and a small vocabulary, so the parameter count excluding word embeddings can be set
beside a paper's. It equals the paper's only for the setting that paper counted, which each config's
header names: ESAN's 3.9M is its Quora model (esan-quora, 3.85M); esan.toml adds the NLI features (4.76M).
Trace entries are listed for a tiny random batch of two pairs.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

from nlivis.features.batch import Batch
from nlivis.features.pos import NUM_POS_TAGS
from nlivis.models.base import MatchingModel
from nlivis.models.registry import build
from nlivis.models.trace import Trace

INSPECT_VOCAB_SIZE = 100
"""Word and char vocabulary rows used by `inspect` (word rows are excluded from the count anyway)."""
INSPECT_WORD_DIM = 300
"""GloVe width, as in every paper's parameter count."""


def build_for_inspection(model_table: dict[str, Any]) -> MatchingModel:
    """The model of a config's [model] table (paper size: no [shipped] overrides), with 300-d word vectors
    (a pretrained encoder, MiniLM, keeps its own width) and a small vocabulary."""
    options = dict(model_table)
    options.update(vocab_size=INSPECT_VOCAB_SIZE, char_vocab_size=INSPECT_VOCAB_SIZE)
    if not options.get("pretrained", False):
        options["word_dim"] = INSPECT_WORD_DIM
    return build(options)


def parameter_table(model: MatchingModel) -> list[tuple[str, int]]:
    """Parameters per top-level submodule (word embedding rows excluded), in definition order."""
    skip = model.word_embedding.weight
    rows = []
    for name, module in model.named_children():
        count = sum(p.numel() for p in module.parameters() if p is not skip)
        if count:
            rows.append((name, count))
    direct = sum(p.numel() for p in model.parameters(recurse=False))
    if direct:
        rows.append(("(own parameters)", direct))
    return rows


def random_batch(premise_lengths: Sequence[int], hypothesis_lengths: Sequence[int], vocab_size: int,
                 char_vocab_size: int, max_chars: int = 6, pad_premise_to: int | None = None,
                 pad_hypothesis_to: int | None = None, num_classes: int = 3, seed: int = 0) -> Batch:
    """A random right-padded Batch with every field filled; the same seed and lengths give the same pairs
    whatever `pad_*_to` is, so a test can compare one pair padded to different widths."""
    generator = torch.Generator().manual_seed(seed)
    size = len(premise_lengths)
    p_width = max(premise_lengths) if pad_premise_to is None else pad_premise_to
    h_width = max(hypothesis_lengths) if pad_hypothesis_to is None else pad_hypothesis_to
    if p_width < max(premise_lengths) or h_width < max(hypothesis_lengths):
        raise ValueError("padding width is shorter than a sentence")

    def sentence(lengths: Sequence[int], width: int) -> dict[str, torch.Tensor]:
        ids = torch.zeros(size, width, dtype=torch.long)
        chars = torch.zeros(size, width, max_chars, dtype=torch.long)
        pos = torch.zeros(size, width, dtype=torch.long)
        exact = torch.zeros(size, width)
        for row, length in enumerate(lengths):
            ids[row, :length] = torch.randint(2, vocab_size, (length,), generator=generator)
            word_lengths = torch.randint(1, max_chars + 1, (length,), generator=generator)
            for t in range(length):
                n = int(word_lengths[t])
                chars[row, t, :n] = torch.randint(2, char_vocab_size, (n,), generator=generator)
            pos[row, :length] = torch.randint(1, NUM_POS_TAGS, (length,), generator=generator)
            exact[row, :length] = torch.randint(0, 2, (length,), generator=generator).float()
        mask = torch.arange(width).unsqueeze(0) < torch.tensor(list(lengths)).unsqueeze(1)
        return {"ids": ids, "chars": chars, "pos": pos, "exact_match": exact, "mask": mask}

    p = sentence(premise_lengths, p_width)
    h = sentence(hypothesis_lengths, h_width)
    labels = torch.randint(0, num_classes, (size,), generator=generator)
    pieces = torch.Generator().manual_seed(seed + 1)  # its own stream: the other fields stay as they were
    p_pieces = _random_pieces(premise_lengths, p_width, vocab_size, pieces)
    h_pieces = _random_pieces(hypothesis_lengths, h_width, vocab_size, pieces)
    return Batch(
        premise_ids=p["ids"], hypothesis_ids=h["ids"], premise_mask=p["mask"], hypothesis_mask=h["mask"],
        premise_chars=p["chars"], hypothesis_chars=h["chars"], premise_pos=p["pos"], hypothesis_pos=h["pos"],
        premise_exact_match=p["exact_match"], hypothesis_exact_match=h["exact_match"], labels=labels,
        ids=[f"random-{i}" for i in range(size)],
        premise_tokens=[[f"p{t}" for t in range(n)] for n in premise_lengths],
        hypothesis_tokens=[[f"h{t}" for t in range(n)] for n in hypothesis_lengths],
        premise_pieces=p_pieces, hypothesis_pieces=h_pieces)


RANDOM_PIECES_PER_WORD = 2
"""Word pieces a random word may have (the second is there for about half the words)."""


def _random_pieces(lengths: Sequence[int], width: int, vocab_size: int, generator: torch.Generator) -> torch.Tensor:
    """Random word-piece ids [B, width, 2] in [1, vocab_size), PAD (0) on padded words and absent second pieces."""
    ids = torch.zeros(len(lengths), width, RANDOM_PIECES_PER_WORD, dtype=torch.long)
    for row, length in enumerate(lengths):
        ids[row, :length] = torch.randint(1, vocab_size, (length, RANDOM_PIECES_PER_WORD), generator=generator)
        ids[row, :length, 1] *= torch.randint(0, 2, (length,), generator=generator)
    return ids


def trace_summary(trace: Trace) -> list[tuple[str, str, tuple[int, ...]]]:
    """(entry name, entry type, shape of its tensor) in computation order."""
    rows = []
    for name, entry in trace.items():
        tensor = next(v for v in vars(entry).values() if isinstance(v, torch.Tensor))
        rows.append((name, type(entry).__name__, tuple(tensor.shape)))
    return rows


