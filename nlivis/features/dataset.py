"""Pairs with their spaCy analyses, cached on disk, and the `prepare` command that fills the cache.

The one way from text to analysed pairs: `analyse_pairs` for `Pair` records (it reads the cache when the same
pairs were analysed by the same pipeline before, and runs spaCy and writes the cache otherwise), and
`analysed_text_pair` for one typed pair (spaCy through `sentences.analyse_text_pair`, remembered in memory).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nlivis.data.protocols import read_split, split_key
from nlivis.data.readers import LINE_ALIGNED_PREFIXES, line_aligned_files
from nlivis.data.records import InputError, Pair, ReadResult
from nlivis.data.text import text_problem
from nlivis.features import sentences as analysis
from nlivis.features.sentences import SentenceAnalysis
from nlivis.features.cache import AnalysisCache, texts_digest
from nlivis.features.spacy_pipeline import load_nlp
from nlivis.store.files import file_digest


@dataclass(frozen=True)
class AnalysedPair:
    """A pair and the analyses of its two sentences (what `Featurizer.encode` consumes)."""

    pair: Pair
    premise: SentenceAnalysis
    hypothesis: SentenceAnalysis


@dataclass(frozen=True)
class AnalysisReport:
    """How `analyse_pairs_reported` got its analyses: from the cache or by running spaCy.

    `seconds` is the time to read the cache file, or to run spaCy and write the cache (model loading
    excluded).
    """

    cached: bool
    seconds: float
    tokens: int

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else float("inf")


def analyse_pairs_reported(
    pairs: Sequence[Pair],
    cache_dir: str | Path | None = None,
    cache_key: str | None = None,
    progress: bool = True,
) -> tuple[list[AnalysedPair], AnalysisReport]:
    """`analyse_pairs` plus an `AnalysisReport` (cache hit or not, time, tokens)."""
    if not pairs:
        return [], AnalysisReport(cached=False, seconds=0.0, tokens=0)
    content = texts_digest((p.id, p.premise, p.hypothesis) for p in pairs)
    key = cache_key if cache_key is not None else f"pairs-{content[:16]}"
    cache = AnalysisCache(cache_dir)
    start = time.perf_counter()
    rows = cache.read(key, content, len(pairs))
    cached = rows is not None
    if rows is None:
        load_nlp()  # load the model before timing, so `seconds` measures the analysis itself
        check_lengths(pairs)
        start = time.perf_counter()
        texts = [text for p in pairs for text in (p.premise, p.hypothesis)]
        analysed = analysis.analyse_sentences(texts, progress=progress)
        rows = list(zip(analysed[0::2], analysed[1::2]))
        try:
            cache.write(key, content, rows)
        except OSError as error:
            warnings.warn(f"could not write the feature cache in {cache.root} ({error}); "
                          "the analyses are used without caching", stacklevel=2)
    items = [AnalysedPair(pair, premise, hypothesis) for pair, (premise, hypothesis) in zip(pairs, rows)]
    tokens = sum(len(item.premise) + len(item.hypothesis) for item in items)
    return items, AnalysisReport(cached, time.perf_counter() - start, tokens)


def analysed_text_pair(premise: str, hypothesis: str) -> AnalysedPair:
    """An `AnalysedPair` (pair id "input") for typed text, through `sentences.analyse_text_pair` (remembered, so
    every model that reads the pair shares one spaCy run); empty text, text without a real word or with bytes
    that were not UTF-8 raises ValueError (`data.text.text_problem`, as for predict)."""
    for name, text in (("premise", premise), ("hypothesis", hypothesis)):
        problem = text_problem(text, name)
        if problem:
            raise ValueError(problem)
    premise_analysis, hypothesis_analysis = analysis.analyse_text_pair(premise, hypothesis)
    return AnalysedPair(Pair(id="input", premise=premise, hypothesis=hypothesis), premise_analysis, hypothesis_analysis)


def analyse_text_pairs(pairs: Sequence[tuple[str, str]], cache_dir: str | Path | None = None,
                       disk_cache: bool = False) -> list[AnalysedPair]:
    """`AnalysedPair`s (ids "0", "1", ...) of (premise, hypothesis) texts — the route of every typed or edited
    pair: spaCy once per distinct sentence, or (with `disk_cache`, for a probe suite's thousands of pairs)
    through the feature cache on disk as a split's pairs are."""
    records = [Pair(id=str(i), premise=premise, hypothesis=hypothesis) for i, (premise, hypothesis) in enumerate(pairs)]
    if disk_cache:
        return analyse_pairs(records, cache_dir=cache_dir, progress=False)
    texts = [text for pair in pairs for text in pair]
    distinct = list(dict.fromkeys(texts))
    by_text = dict(zip(distinct, analysis.analyse_sentences(distinct)))
    return [AnalysedPair(record, by_text[record.premise], by_text[record.hypothesis]) for record in records]


def check_lengths(pairs: Sequence[Pair]) -> None:
    """Refuse, before spaCy runs, a sentence longer than spaCy reads, naming its file and line (or its
    pair id where the pair was typed)."""
    for pair in pairs:
        for text, name in ((pair.premise, "premise"), (pair.hypothesis, "hypothesis")):
            problem = analysis.length_problem(text, name)
            if problem:
                where = f"{pair.source}, line {pair.line}" if pair.source and pair.line else f"pair {pair.id!r}"
                raise InputError(f"{where}: {problem}", pair.source, pair.line)


def analyse_pairs(
    pairs: Sequence[Pair],
    cache_dir: str | Path | None = None,
    cache_key: str | None = None,
    progress: bool = True,
) -> list[AnalysedPair]:
    """Analyses of both sentences of every pair, in order, through the disk cache.

    `cache_key` names the source (e.g. split key + source file hash); the cache file also depends on
    the spaCy pipeline version and the feature format, and its stored digest of the pairs' ids and
    texts must match, so a stale file is never used. Without a key, the digest of the pairs' texts is
    the key. `cache_dir` overrides the default folder (`store.files.cache_root`). `progress` shows a
    tqdm bar while spaCy runs.
    """
    return analyse_pairs_reported(pairs, cache_dir, cache_key, progress)[0]


def source_files(result: ReadResult) -> list[Path]:
    """Every file the split was read from (a line-aligned split has three)."""
    files = {Path(p.source) for p in result.pairs if p.source}
    if result.path:
        files.add(Path(result.path))
    for path in list(files):
        compressed = path.suffix == ".gz"
        name = path.name[: -len(".gz")] if compressed else path.name
        prefix, _, split = name.partition(".")
        if prefix in LINE_ALIGNED_PREFIXES and split:
            files.update(line_aligned_files(path.parent, split, compressed))
    return sorted(f for f in files if f.is_file())


def split_cache_key(ref, result: ReadResult) -> str:
    """`<split_key>-<sha256 of the source files>`: a changed file gets a new cache entry."""
    return f"{split_key(ref)}-{file_digest(source_files(result))[:16]}"


def cached_split_tokens(ref, result: ReadResult, cache_dir: str | Path | None = None
                        ) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]] | None:
    """(pair id, premise tokens, hypothesis tokens) for every pair of a read split, in row order, from the feature
    cache, or None when the split was never analysed on this machine (spaCy is never run here). One decode of the
    cache serves every model: its unknown words and its cut-offs (which count tokens) both come from these."""
    pairs = result.pairs
    rows = AnalysisCache(cache_dir).read(split_cache_key(ref, result),
                                         texts_digest((p.id, p.premise, p.hypothesis) for p in pairs), len(pairs))
    if rows is None:
        return None
    return [(pair.id, a.tokens, b.tokens) for pair, (a, b) in zip(pairs, rows)]


def load_split_analysed_reported(
    ref, data_root: str | Path, cache_dir: str | Path | None = None, progress: bool = True
) -> tuple[list[AnalysedPair], ReadResult, AnalysisReport]:
    """`load_split_analysed` plus the `AnalysisReport`."""
    result = read_split(ref, data_root)
    items, report = analyse_pairs_reported(
        result.pairs, cache_dir=cache_dir, cache_key=split_cache_key(ref, result), progress=progress
    )
    return items, result, report


def load_split_analysed(
    ref, data_root: str | Path, cache_dir: str | Path | None = None
) -> tuple[list[AnalysedPair], ReadResult]:
    """Read a split (`data.protocols.read_split`) and analyse it through the cache, keyed by the
    split's name and the content hash of its source files."""
    items, result, _ = load_split_analysed_reported(ref, data_root, cache_dir)
    return items, result
