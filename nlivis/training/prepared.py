"""The data a training run reads: the protocol's splits analysed (spaCy, cached), the vocabularies built from
them, the word vectors, and DIIN's SNLI mix-in pool under `mnli`."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch

from nlivis.data.protocols import SplitRef, candidate_files, find_split_file, require_training_splits, split_key
from nlivis.features.dataset import load_split_analysed_reported
from nlivis.features.embeddings import build_embeddings
from nlivis.features.vocab import CharVocabulary, Vocabulary
from nlivis.training.config import FeatureOptions

SNLI_MIX_IN_FOLDERS = ("snli_1.0", "")
"""Where under an `mnli` data root SNLI's training split is looked for (the official zip's folder first)."""


@dataclass
class MixIn:
    """Pairs drawn anew each epoch besides the protocol's training splits (DIIN's 15% of SNLI with MultiNLI)."""

    split: str
    fraction: float
    items: list

    @property
    def per_epoch(self) -> int:
        return round(self.fraction * len(self.items))


@dataclass
class PreparedData:
    """A run's analysed pairs, vocabularies and word vectors."""

    protocol: Any
    train_items: list
    """The labelled pairs of the protocol's training split(s), in order."""
    train_sources: list[tuple[str, int]]
    """(split key, pairs) of each training split, in the order of `train_items`."""
    select_items: list
    report_items: dict[str, list]
    select_key: str
    vocab: Any
    char_vocab: Any
    vectors: torch.Tensor
    embedding_stats: dict[str, Any]
    vocabulary_record: dict[str, Any]
    mix_in: MixIn | None = None


def _token_lists(items: Sequence) -> list[Sequence[str]]:
    return [t for item in items for t in (item.premise.tokens, item.hypothesis.tokens)]


def build_vocabulary(train_items: Sequence, eval_items: Sequence, options: FeatureOptions, add_eval_words: bool):
    """Training words (min_freq); when `add_eval_words`, select/report words not among them are appended
    (most frequent first), so frozen pretrained vectors cover them. Returns the vocabulary and its record."""
    vocab = Vocabulary.build(_token_lists(train_items), min_freq=options.min_word_freq, lowercase=options.lowercase)
    added = 0
    if add_eval_words:
        counts: Counter = Counter(vocab.normalize(t) for tokens in _token_lists(eval_items) for t in tokens)
        extra = sorted((w for w in counts if w not in vocab.index), key=lambda w: (-counts[w], w))
        vocab = Vocabulary([*vocab.symbols, *extra], lowercase=vocab.lowercase)
        added = len(extra)
    record = {"size": len(vocab), "min_freq": options.min_word_freq, "lowercase": options.lowercase,
              "from_training_split": len(vocab) - added, "added_from_select_and_report_splits": added,
              "file": "vocab.json"}
    return vocab, record


def snli_mix_in_ref(data_dir: Path):
    """SNLI's training split under an `mnli` data root (snli_1.0/ first, then the root), or a clear error."""
    refs = [SplitRef("snli", "train", folder) for folder in SNLI_MIX_IN_FOLDERS]
    for ref in refs:
        if find_split_file(ref, data_dir) is not None:
            return ref
    looked = ", ".join(str(path) for ref in refs for path in candidate_files(ref, data_dir) if path.suffix != ".gz")
    raise FileNotFoundError(f"[training] snli_fraction_with_mnli needs SNLI's training split beside MultiNLI; looked for "
                            f"{looked} (each also as .gz); put snli_1.0/ in {data_dir} or set the fraction to 0")


def prepare_data(protocol, data_dir: Path, options: FeatureOptions, frozen: bool, word_dim: int, seed: int,
                 cache_dir, progress: bool, snli_fraction: float = 0.0,
                 on_split: Callable[[str], None] | None = None) -> PreparedData:
    """The protocol's splits, analysed; with `snli_fraction` under the `mnli` protocol, SNLI's training split
    too, as the pool each epoch's mix-in is drawn from (its words are training words). `on_split(key)` is
    told each split as its reading begins (the Train page's progress)."""
    require_training_splits(protocol, data_dir)
    loaded: dict[Any, list] = {}

    def items_of(ref) -> list:
        if ref not in loaded:
            if on_split is not None:
                on_split(split_key(ref))
            loaded[ref] = load_split_analysed_reported(ref, data_dir, cache_dir, progress=progress)[0]
        return loaded[ref]

    labelled = [(split_key(ref), [item for item in items_of(ref) if item.pair.label is not None]) for ref in protocol.train]
    train_items = [item for _, items in labelled for item in items]
    if not train_items:
        raise ValueError(f"protocol {protocol.name!r}: the training split(s) have no labelled pairs")
    select_items = items_of(protocol.select)
    report_items = {split_key(ref): items_of(ref) for ref in protocol.report}
    mix_in = None
    if snli_fraction > 0 and protocol.name == "mnli":
        ref = snli_mix_in_ref(data_dir)
        mix_in = MixIn(split_key(ref), snli_fraction, [i for i in items_of(ref) if i.pair.label is not None])
    vocabulary_items = train_items + (mix_in.items if mix_in else [])
    pretrained = options.embeddings != "random"
    eval_items = [*select_items, *(i for items in report_items.values() for i in items)]
    vocab, vocab_record = build_vocabulary(vocabulary_items, eval_items, options, add_eval_words=pretrained and frozen)
    char_vocab = CharVocabulary.build(_token_lists(vocabulary_items), max_chars=options.max_chars)
    vectors, stats = build_embeddings(options.embeddings, vocab, dim=None if pretrained else word_dim, seed=seed,
                                      oov_scale=options.unknown_word_scale or None, oov_init=options.unknown_word_init)
    return PreparedData(protocol=protocol, train_items=train_items,
                        train_sources=[(key, len(items)) for key, items in labelled], select_items=select_items,
                        report_items=report_items, select_key=split_key(protocol.select), vocab=vocab,
                        char_vocab=char_vocab, vectors=vectors,
                        embedding_stats=dict(stats) if isinstance(stats, Mapping) else _as_dict(stats),
                        vocabulary_record=vocab_record, mix_in=mix_in)


def _as_dict(value: Any) -> dict[str, Any]:
    if hasattr(value, "to_dict"):
        return dict(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return {f: getattr(value, f) for f in value.__dataclass_fields__}
    return {"value": str(value)}
