"""Cached: what the app computes over a local split's pairs — a fixed sample analysed with spaCy, the spread
of a model's gates over it, automatic and gold annotation tags, TaxiNLI's categories, the tokens each model
reads and cuts off, projections of a sample and faithfulness over one (see `nlivis.app.cache` for the keying).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis import pair_lists
from nlivis.analysis.breakdown import pair_taxonomy as taxonomy_of_pair
from nlivis.analysis.evaluation import count_truncated, count_truncated_sides
from nlivis.analysis.projection import Progress, ProjectionError
from nlivis.analysis.tags import TagFileError, read_tag_file
from nlivis.app import paths
from nlivis.app.cache import (Model, NotReady, load_cached, load_model, local_split, memo, not_local, read_split_cached,
                              split_rows)
from nlivis.data.protocols import SplitRef, gold_tag_file
from nlivis.data.records import DataFormatError
from nlivis.data.taxonomies import find_taxinli_file, read_taxinli
from nlivis.features.dataset import cached_split_tokens
from nlivis.features.settings import FeatureSettings
from nlivis.app.cache.run_memo import folder_stamp_in_run
from nlivis.store.files import cache_root, file_stamp
from nlivis.workflows import samples as sampling
from nlivis.workflows.projection import ProjectionOptions, is_cached, project_sample_of, projection_table
from nlivis.workflows.samples import TaggedSample


# ---------------------------------------------------------------- samples of a split

@st.cache_resource(max_entries=8, show_spinner="analysing a sample of the split with spaCy …")
def _analysed_sample_cached(ref: SplitRef, root: str, size: int, seed: int) -> list[Any]:
    return sampling.analysed_sample(list(read_split_cached(ref, root).pairs), size, seed)


def analysed_sample(key: str, size: int, seed: int = 0) -> tuple[list[Any], str | None]:
    """A fixed random sample (by seed) of `size` pairs of a local split, analysed with spaCy (cached)."""
    local = local_split(key)
    if local is None:
        return [], not_local(key)
    try:
        return _analysed_sample_cached(*local, int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return [], str(error)


@st.cache_resource(max_entries=16, show_spinner=False)
def _gate_statistics_cached(name: str, path: str, stamp: float, ref: SplitRef, root: str, size: int) -> pd.DataFrame:
    return sampling.gate_statistics(load_cached(path, stamp), _analysed_sample_cached(ref, root, size, 0), name)


def gate_statistics(model: Model, key: str, size: int) -> tuple[pd.DataFrame, str | None]:
    """Mean and spread of each of the model's gates over the real tokens of a sample of split `key`."""
    local = local_split(key)
    if local is None:
        return pd.DataFrame(), not_local(key)
    try:
        return _gate_statistics_cached(model.name, model.path, folder_stamp_in_run(model.path), *local, int(size)), None
    except (OSError, ValueError) as error:
        return pd.DataFrame(), str(error)


@st.cache_resource(max_entries=8, show_spinner="tagging pairs (spaCy parse) …")
def _tagged_sample_cached(ref: SplitRef, root: str, size: int, seed: int) -> TaggedSample:
    return sampling.tagged_sample(list(read_split_cached(ref, root).pairs), size, seed, cache_root() / "tags")


def tagged_sample(key: str, size: int, seed: int = 0) -> tuple[TaggedSample | None, str | None]:
    """Automatic tags for a fixed random sample of `size` pairs of a local split (`sampling.ALL_PAIRS`: every pair),
    cached in memory and on disk, or (None, why there are none)."""
    local = local_split(key)
    if local is None:
        return None, (f"the pairs of {key} are not in the data folder ({paths.data_root() or 'none found'}), so they "
                      "cannot be tagged")
    try:
        return _tagged_sample_cached(*local, int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return None, str(error)


# ---------------------------------------------------------------- annotation tags

@st.cache_resource(max_entries=4, show_spinner=False)
def _gold_tags_cached(path: str, stamp: float) -> dict[str, frozenset[str]]:
    return read_tag_file(path)


def gold_tags(key: str) -> tuple[dict[str, frozenset[str]], str | None, str | None]:
    """(pair id → gold tags, the file they come from, an error) for local split `key`; ({}, None, None) when
    the split has no published gold tags in the data folder."""
    local = local_split(key)
    path = None if local is None else gold_tag_file(*local)
    if path is None:
        return {}, None, None
    try:
        return _gold_tags_cached(str(path), file_stamp(path)), str(path), None
    except (OSError, TagFileError) as error:
        return {}, str(path), str(error)


@st.cache_resource(max_entries=2, show_spinner=False)
def _taxinli_cached(path: str, stamp: float) -> Any:
    return read_taxinli(path)


def taxinli() -> tuple[Any | None, str | None]:
    """(TaxiNLI's file under the data folder, read, None), (None, why it cannot be read), or (None, None) when
    absent."""
    root = paths.data_root()
    path = None if root is None else find_taxinli_file(root)
    if path is None:
        return None, None
    try:
        return _taxinli_cached(str(path), file_stamp(path)), None
    except (OSError, DataFormatError) as error:
        return None, str(error)


@st.cache_resource(max_entries=256, show_spinner=False)
def _pair_taxonomy_cached(path: str, stamp: float, pair_id: str | None, premise: str, hypothesis: str) -> dict | None:
    return taxonomy_of_pair(_taxinli_cached(path, stamp).rows, pair_id, premise, hypothesis)


def pair_taxonomy(pair_id: str | None, premise: str, hypothesis: str) -> dict | None:
    """What TaxiNLI says about one pair (`breakdown.pair_taxonomy`), or None; looked up once per pair and state of
    the file (a typed pair is looked for through all of its rows). Shared: never modify it."""
    root = paths.data_root()
    path = None if root is None else find_taxinli_file(root)
    if path is None or taxinli()[0] is None:
        return None
    return _pair_taxonomy_cached(str(path), file_stamp(path), pair_id, premise, hypothesis)


# ---------------------------------------------------------------- tokens of a split, as each model reads them

@st.cache_resource(max_entries=8, show_spinner="reading the split's cached analyses …")
def _split_tokens_cached(ref: SplitRef, root: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    tokens = cached_split_tokens(ref, read_split_cached(ref, root))
    if tokens is None:
        raise NotReady(str(ref))
    return tokens


@st.cache_resource(max_entries=16, show_spinner=False)
def _token_counts_cached(name: str, path: str, stamp: float, ref: SplitRef, root: str) -> dict[str, tuple[int, int]]:
    tokens = {pair_id: (premise, hypothesis) for pair_id, premise, hypothesis in _split_tokens_cached(ref, root)}
    return pair_lists.token_counts(tokens, load_cached(path, stamp).featurizer.vocab)


def token_counts(model: Model, key: str) -> dict[str, tuple[int, int]] | None:
    """Pair id → (tokens, tokens `model` reads as unknown) over split `key`, or None when the split's analyses
    are not in the feature cache."""
    local = local_split(key)
    try:
        return None if local is None else _token_counts_cached(model.name, model.path, folder_stamp_in_run(model.path), *local)
    except (NotReady, OSError, ValueError):
        return None


@st.cache_resource(max_entries=64, show_spinner=False)
def _split_truncation_cached(path: str, stamp: float, ref: SplitRef, root: str,
                             _settings: FeatureSettings) -> tuple[str, int]:
    sides = [(premise, hypothesis) for _, premise, hypothesis in _split_tokens_cached(ref, root)]
    count = count_truncated_sides(_settings, sides)
    return count.describe(), count.pairs


def split_truncation(model: Model, key: str) -> tuple[bool, str, int]:
    """(known, sentence, pairs cut) for how many pairs of split `key` the model's token cut-offs shorten, from
    the feature cache and the cut-offs its config.json gives (the model need not be loaded); known is False when
    the split was never analysed on this machine."""
    local = local_split(key)
    if local is None:
        return False, "", 0
    try:
        return (True, *_split_truncation_cached(model.path, folder_stamp_in_run(model.path), *local, model.described.settings))
    except (NotReady, OSError, ValueError):
        return False, "", 0


def sample_truncation(model: Model, items: Sequence[Any]) -> tuple[str, int]:
    """(sentence, pairs cut) for the analysed sample `items`: one pass over token counts, no spaCy run; counted
    once per model folder state and sample (a cached sample is the same object at every run: ~15 ms of each run of
    the Projection page counted 1,000 pairs again)."""
    settings = model.described.settings  # the featurizer's own cut-offs, from config.json: no weights needed
    counted, sentence, pairs = _sample_truncation_cached(model.path, folder_stamp_in_run(model.path), id(items), items,
                                                         settings)
    if counted is not items:  # not the object counted (cannot happen while the cache holds it): count this one
        count = count_truncated(settings, items)
        return count.describe(), count.pairs
    return sentence, pairs


@st.cache_resource(max_entries=16, show_spinner=False)
def _sample_truncation_cached(path: str, stamp: float, items_id: int, _items: Sequence[Any],
                              _settings: FeatureSettings) -> tuple[Sequence[Any], str, int]:
    """Keyed by the sample's identity: the entry holds the sample, so no other object can take its id meanwhile."""
    count = count_truncated(_settings, _items)
    return _items, count.describe(), count.pairs


def split_faithfulness(model: Model, items: Sequence[Any], split: str, seed: int, methods: Sequence[str],
                       highlights_file: Path | None, on_method: Callable[[str], None] | None = None) -> dict[str, Any]:
    """`summarize` output (with per-pair distributions) for `items`, every method cached on disk by checkpoint,
    split, sample and method (the same cache and workflow as `python -m nlivis faithfulness`)."""
    from nlivis.workflows.faithfulness import FaithfulnessOptions
    from nlivis.workflows.faithfulness import split_faithfulness as computed

    options = FaithfulnessOptions(sample=None, seed=seed, methods=tuple(methods))
    return computed(model.checkpoint, items, split, options, highlights_file, on_method=on_method,
                    keep_distributions=True).summary


# ---------------------------------------------------------------- projections

def projection_frame(model: Model, split: str, size: int, method: str, colour: str, tag: str | None,
                     compute: bool = True, progress: Progress | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """The projected sample of `size` pairs of split `split` as a table (`workflows.projection.projection_table`)
    with `colour` (the value of the chosen colouring), or (None, why not). Vectors, predictions and the 2-D
    layout are cached on disk under the cache root; without `compute`, only what is cached there is used. Once the
    layout is on disk, the table is built once per model folder state, sample, method and colouring and kept in
    memory (each run of the Projection page built it again from the disk cache); the caller gets its own copy."""
    if not projection_cached(model, split, size, method):
        if not compute:
            return None, f"{model.name}'s {method.upper()} projection of {size} pairs of {split} is not computed yet"
        return _projection_frame(model, split, size, method, colour, tag, progress)

    def built() -> pd.DataFrame:
        frame, problem = _projection_frame(model, split, size, method, colour, tag, None)
        if frame is None:
            raise NotReady(problem)  # not kept: the next run asks again
        return frame

    key = (model.path, folder_stamp_in_run(model.path), repr(local_split(split)), int(size), method, colour, tag)
    try:
        return memo("projection frame", key, built).copy(), None
    except NotReady as problem:
        return None, str(problem)


def _projection_frame(model: Model, split: str, size: int, method: str, colour: str, tag: str | None,
                      progress: Progress | None) -> tuple[pd.DataFrame | None, str | None]:
    items, error = analysed_sample(split, size)
    if error or not items:
        return None, error or f"{split} has no pairs"
    try:
        projected = project_sample_of(model.path, lambda: loaded_checkpoint(model), items,
                                      ProjectionOptions(f"{split}-sample{size}", method), progress)
    except (ProjectionError, ValueError) as problem:
        return None, f"{model.name}: {problem}"
    tags = None
    if colour == "tag":
        tagged, tag_error = tagged_sample(split, size)
        if tagged is None:
            return None, tag_error
        tags = tagged.tags
    frame = projection_table(projected, items, model.labels, split, split_rows(split), tags, tag)
    frame["colour"] = frame[colour] if colour in frame else ""
    return frame, None


def loaded_checkpoint(model: Model) -> Any:
    """The model's loaded checkpoint: its own, or loaded now (`cache.load_model`, the one loader) where the page
    has only its config.json (`weights=False`: the Projection page reads a kept layout without the weights)."""
    if model.checkpoint is not None:
        return model.checkpoint
    checkpoint, error = load_model(model.path)
    if checkpoint is None:
        raise ProjectionError(str(error))
    return checkpoint


def projection_cached(model: Model, key: str, size: int, method: str) -> bool:
    """Whether this projection is already on disk (no progress bar is needed)."""
    return is_cached(model.path, f"{key}-sample{size}", method)
