"""What the app computes over a sample of a split's pairs: their automatic annotation tags (`analysis.tags`,
kept on disk), and the spread of a model's gates over them (`analysis.gates`). The caller reads the split; these
draw a fixed sample of it (by seed) and run spaCy, the tagger or the model on it.
"""
from __future__ import annotations

import json
import random
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from nlivis.analysis.tags import tag_cache_key, tag_pairs, unavailable_tags
from nlivis.data.records import Pair
from nlivis.features.dataset import AnalysedPair, analyse_pairs
from nlivis.features.wordnet import copy_problem, corpus_folder
from nlivis.store.files import atomic_write_json, read_sealed

ALL_PAIRS = 0
"""A sample size that means every pair of the split (their tags are kept on disk under the cache root)."""
GATE_BATCH_SIZE = 32


@dataclass
class TaggedSample:
    """Automatic annotation tags for a sample of a split's pairs (pair id → tags), and the tags the rules
    cannot decide here (tag → why)."""

    tags: dict[str, frozenset[str]]
    unavailable: dict[str, str]
    size: int


def sample_pairs(pairs: Sequence[Pair], size: int, seed: int) -> list[Pair]:
    """A fixed random sample (by `seed`) of `size` of `pairs`, in their order (all of them when there are fewer)."""
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    return [pairs[i] for i in chosen]


def analysed_sample(pairs: Sequence[Pair], size: int, seed: int) -> list[AnalysedPair]:
    """`sample_pairs`, analysed with spaCy (analyses kept in the feature cache)."""
    return analyse_pairs(sample_pairs(pairs, size, seed), progress=False)


def tagged_sample(pairs: Sequence[Pair], size: int, seed: int, cache_dir: str | Path) -> TaggedSample:
    """The automatic tags of `sample_pairs` (`ALL_PAIRS`, or a size past the split's: every pair), kept in
    `cache_dir`."""
    return tag_sample(pairs if size == ALL_PAIRS or size >= len(pairs) else sample_pairs(pairs, size, seed), cache_dir)


def cached_tag_pairs(pairs: Sequence[Pair], cache_dir: str | Path) -> dict[str, frozenset[str]]:
    """`tag_pairs`, kept as sealed JSON in `cache_dir` (its size and sha256 beside it, `store.files.write_sealed`):
    parsing a dev set with the dependency parser takes minutes on a CPU, reading the result back milliseconds.
    A file that is absent, damaged or unsealed is computed again."""
    path = Path(cache_dir) / f"tags-{tag_cache_key(pairs)}.json"
    stored = _stored_tags(path)
    if stored is not None:
        return stored
    tags = tag_pairs(pairs)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {pair_id: sorted(names) for pair_id, names in tags.items()}, indent=None, sealed=True)
    return tags


def _stored_tags(path: Path) -> dict[str, frozenset[str]] | None:
    """The tags `cached_tag_pairs` kept in `path`, or None when it is absent, damaged or unsealed."""
    data = read_sealed(path)
    try:
        stored = json.loads(data) if data is not None else None
    except ValueError:
        stored = None
    if isinstance(stored, dict) and all(isinstance(names, list) for names in stored.values()):
        return {pair_id: frozenset(names) for pair_id, names in stored.items()}
    return None


def tag_sample(pairs: Sequence[Pair], cache_dir: str | Path) -> TaggedSample:
    """The automatic tags of `pairs`, each pair's kept in `cache_dir` (a pair tagged before is read back).

    While nlivis's copy of WordNet is in place (a look at its files' sizes), tags kept from a run with WordNet are
    read without opening it: opening WordNet (NLTK's import, scipy.stats with it, and its index files) cost 2-3 CPU s
    of the first Ablations or Table 7 view after a launch (py-spy on the server), and such tags leave none
    undecided. Otherwise WordNet is opened to know which tags are kept and which cannot be decided."""
    if copy_problem(corpus_folder()) is None:
        kept = _stored_tags(Path(cache_dir) / f"tags-{tag_cache_key(pairs, wordnet=True)}.json")
        if kept is not None:
            return TaggedSample(kept, {}, len(pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-WordNet warning is shown through `unavailable`
        tags = cached_tag_pairs(pairs, cache_dir=cache_dir)
    return TaggedSample(dict(tags), unavailable_tags(), len(pairs))


def gate_statistics(loaded, items: Sequence, name: str) -> pd.DataFrame:
    """Mean and spread of each of the loaded checkpoint's gates over the real tokens of the analysed pairs
    `items` (`analysis.gates.gate_summary`, the rows labelled `name`)."""
    from nlivis.analysis.gates import gate_summary  # runs the model: torch loads here, not with the tags

    featurizer = loaded.featurizer
    batches = [featurizer.encode(items[i:i + GATE_BATCH_SIZE]) for i in range(0, len(items), GATE_BATCH_SIZE)]
    return gate_summary(loaded.model, batches, name)
