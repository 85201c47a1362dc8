"""The data a training run reads: the protocol's splits analysed (spaCy, cached), the vocabularies built from
them, the word vectors, and DIIN's SNLI mix-in pool under `mnli`."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

import torch

from nlivis.data.protocols import (SplitRef, candidate_files, find_split_file, read_split, require_training_splits,
                                   split_key)
from nlivis.features.cache import AnalysisCache, texts_digest
from nlivis.features.dataset import AnalysedPair, analyse_pairs, check_lengths, load_split_analysed_reported, split_cache_key
from nlivis.features.embeddings import build_embeddings
from nlivis.features.spacy_pipeline import load_nlp
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
    """A run's analysed pairs, vocabularies and word vectors. The select and report splits are analysed when first
    asked for (`items_of`): training starts once its own pairs are analysed, and on a cold feature cache the select
    split's spaCy pass (as long as the training split's on snli-small) waits for the first evaluation."""

    protocol: Any
    train_items: list
    """The labelled pairs of the protocol's training split(s), in order."""
    train_sources: list[tuple[str, int]]
    """(split key, pairs) of each training split, in the order of `train_items`."""
    items_of: Callable[[SplitRef], list]
    """A split's analysed pairs (read or analysed once, then kept)."""
    select_key: str
    vocab: Any
    char_vocab: Any
    vectors: torch.Tensor
    embedding_stats: dict[str, Any]
    vocabulary_record: dict[str, Any]
    mix_in: MixIn | None = None

    @property
    def select_items(self) -> list:
        return self.items_of(self.protocol.select)

    @property
    def report_items(self) -> dict[str, list]:
        return {split_key(ref): self.items_of(ref) for ref in self.protocol.report}


def _token_lists(items: Sequence) -> list[Sequence[str]]:
    return [t for item in items for t in (item.premise.tokens, item.hypothesis.tokens)]


def build_vocabulary(train_items: Sequence, eval_tokens: Sequence[Sequence[str]], options: FeatureOptions,
                     add_eval_words: bool):
    """Training words (min_freq); when `add_eval_words`, select/report words (`eval_tokens`: their sentences'
    tokens) not among them are appended (most frequent first), so frozen pretrained vectors cover them. Returns
    the vocabulary and its record."""
    vocab = Vocabulary.build(_token_lists(train_items), min_freq=options.min_word_freq, lowercase=options.lowercase)
    added = 0
    if add_eval_words:
        counts: Counter = Counter(vocab.normalize(t) for tokens in eval_tokens for t in tokens)
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


@dataclass(frozen=True)
class TokensOnly:
    """A sentence as spaCy's tokenizer splits it, not tagged or lemmatised: enough for the vocabulary and the
    batches' lengths. A training pair that a short run never reaches keeps it (`planned_training_items`); its
    tags and lemmas are refused, so it can never be featurised by mistake."""

    tokens: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def tags(self) -> tuple[str, ...]:
        raise RuntimeError("a training pair outside the run's planned steps was featurised: it was never analysed")

    @property
    def lemmas(self) -> tuple[str, ...]:
        return self.tags


Plan = Callable[[Sequence[AnalysedPair]], Collection[int]]
"""The labelled training pairs (tokenised only) → the indices of those the run's steps will use."""


def planned_training_items(ref, data_dir: Path, cache_dir, plan: Plan, progress: bool) -> list:
    """The pairs of training split `ref`, analysed (through the feature cache) — but when the split is not cached
    and `plan` leaves pairs out (a run shorter than an epoch), spaCy runs only on the labelled pairs it picks and
    the others are only tokenised (`TokensOnly`): a few hundred pairs instead of the whole split before the first
    step."""
    result = read_split(ref, data_dir)
    pairs, key = result.pairs, split_cache_key(ref, result)
    if not AnalysisCache(cache_dir).path_for(key).is_file():
        check_lengths(pairs)
        tokens = tokenised([text for pair in pairs for text in (pair.premise, pair.hypothesis)])
        rough = [AnalysedPair(pair, TokensOnly(premise), TokensOnly(hypothesis))
                 for pair, premise, hypothesis in zip(pairs, tokens[0::2], tokens[1::2])]
        labelled = [i for i, item in enumerate(rough) if item.pair.label is not None]
        picked = sorted({labelled[j] for j in plan([rough[i] for i in labelled])})
        if len(picked) < len(labelled):
            analysed = dict(zip(picked, analyse_pairs([pairs[i] for i in picked], cache_dir, progress=False)))
            return [analysed.get(i, item) for i, item in enumerate(rough)]
    return analyse_pairs(pairs, cache_dir, cache_key=key, progress=progress)


def prepare_data(protocol, data_dir: Path, options: FeatureOptions, frozen: bool, word_dim: int, seed: int,
                 cache_dir, progress: bool, snli_fraction: float = 0.0,
                 on_split: Callable[[str], None] | None = None, plan: Plan | None = None) -> PreparedData:
    """The protocol's splits, analysed; with `snli_fraction` under the `mnli` protocol, SNLI's training split
    too, as the pool each epoch's mix-in is drawn from (its words are training words). `on_split(key)` is
    told each split as its reading begins (the Train page's progress). `plan` (one training split, no mix-in):
    the pairs a run shorter than an epoch uses, the only ones analysed when the split is not cached
    (`planned_training_items`)."""
    require_training_splits(protocol, data_dir)
    loaded: dict[Any, list] = {}
    if plan is not None and len(protocol.train) == 1 and not (snli_fraction > 0 and protocol.name == "mnli"):
        if on_split is not None:
            on_split(split_key(protocol.train[0]))
        loaded[protocol.train[0]] = planned_training_items(protocol.train[0], data_dir, cache_dir, plan, progress)

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
    mix_in = None
    if snli_fraction > 0 and protocol.name == "mnli":
        ref = snli_mix_in_ref(data_dir)
        mix_in = MixIn(split_key(ref), snli_fraction, [i for i in items_of(ref) if i.pair.label is not None])
    vocabulary_items = train_items + (mix_in.items if mix_in else [])
    pretrained = options.embeddings != "random"
    add_eval_words = pretrained and frozen
    eval_tokens = ([tokens for ref in dict.fromkeys([protocol.select, *protocol.report])
                    for tokens in eval_split_tokens(ref, data_dir, cache_dir, loaded, items_of)]
                   if add_eval_words else [])
    vocab, vocab_record = build_vocabulary(vocabulary_items, eval_tokens, options, add_eval_words=add_eval_words)
    char_vocab = CharVocabulary.build(_token_lists(vocabulary_items), max_chars=options.max_chars)
    vectors, stats = build_embeddings(options.embeddings, vocab, dim=None if pretrained else word_dim, seed=seed,
                                      oov_scale=options.unknown_word_scale or None, oov_init=options.unknown_word_init)
    return PreparedData(protocol=protocol, train_items=train_items,
                        train_sources=[(key, len(items)) for key, items in labelled], items_of=items_of,
                        select_key=split_key(protocol.select), vocab=vocab,
                        char_vocab=char_vocab, vectors=vectors,
                        embedding_stats=dict(stats) if isinstance(stats, Mapping) else _as_dict(stats),
                        vocabulary_record=vocab_record, mix_in=mix_in)


def eval_split_tokens(ref, data_dir: Path, cache_dir, loaded: Mapping, items_of: Callable[[Any], list]
                      ) -> list[Sequence[str]]:
    """The tokens of every sentence of an evaluation split, for the vocabulary, without waiting for its full
    analysis: its analysed pairs when they are at hand (read already, or in the feature cache), else spaCy's
    tokenizer alone (the pipeline's other components tag and lemmatise but never split a token differently), its
    sentences' lengths checked as the analysis would."""
    if ref not in loaded:
        result = read_split(ref, data_dir)
        pairs = result.pairs
        digest = texts_digest((p.id, p.premise, p.hypothesis) for p in pairs)
        if AnalysisCache(cache_dir).read(split_cache_key(ref, result), digest, len(pairs)) is None:
            check_lengths(pairs)
            return tokenised([text for p in pairs for text in (p.premise, p.hypothesis)])
    return _token_lists(items_of(ref))


def tokenised(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """spaCy's tokens of each text (whitespace tokens left out, as `features.sentences` does), tokenizer only."""
    tokenizer = load_nlp().tokenizer
    return [tuple(token.text for token in doc if not token.is_space) for doc in tokenizer.pipe(texts, batch_size=1000)]


def _as_dict(value: Any) -> dict[str, Any]:
    if hasattr(value, "to_dict"):
        return dict(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return {f: getattr(value, f) for f in value.__dataclass_fields__}
    return {"value": str(value)}
