"""Projections of a model's view of a sample of pairs: one traced pass pools each pair's vector (its trace's
`Representation` entry) and keeps the class probabilities, and the 2-D layout (`analysis.projection`: UMAP or
PCA) of those vectors is computed at most once.

Vectors, probabilities and layouts are cached on disk as .npy / .json (never pickle), keyed by the checkpoint's
content (sha256 of model.safetensors and config.json) and the split, so a view re-opened later does not
recompute anything, and colouring points by prediction or correctness never runs the model again.
`projection_table` joins a projection with its pairs for the app's scatter and lists.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from nlivis.analysis.projection import METHODS, Progress, ProjectionError, project
from nlivis.models.trace import Representation
from nlivis.workflows import protocol
from nlivis.store.files import (atomic_write_json, cache_root, read_sealed, read_sealed_array, seal_path, sha256_file,
                                write_sealed, write_sealed_array)
from nlivis.workflows.specs import ProjectionOptions
from nlivis.workflows.subjects import SplitSample


# ------------------------------------------------------------------------------ representations

@dataclass(frozen=True)
class PooledOutputs:
    """One pass of a model over pairs: the pooled vectors [N, d] it classifies and its class
    probabilities [N, C] (in the checkpoint's label order), both in the order of the pairs given."""

    vectors: np.ndarray
    probabilities: np.ndarray


def pooled_outputs(loaded_checkpoint, analysed_pairs: Sequence, batch_size: int = 256,
                   entry_name: str | None = None,
                   progress: Callable[[int, int], None] | None = None) -> PooledOutputs:
    """The pooled vector and the class probabilities the model computes for each pair.

    Runs the checkpoint's model in eval mode without gradients on batches made by its featurizer,
    with tracing on, and keeps the trace's `Representation` entry (the last one, or the one named
    `entry_name`) and the probabilities of its logits. Pairs are batched by length (less padding) and
    put back in input order. `progress(done, total)` is called after each batch. Tracing keeps every
    internal of a batch alive at once (DIIN's interaction tensor is B·P·H·d floats), so large models
    want a smaller batch.
    """
    import torch  # only to run the model: a projection read from disk imports no torch (the Projection page's first visit)

    model, featurizer = loaded_checkpoint.model, loaded_checkpoint.featurizer
    where = f"checkpoint {getattr(loaded_checkpoint, 'path', '?')}"
    total = len(analysed_pairs)
    if total == 0:
        raise ProjectionError(f"{where}: no pairs to represent")
    try:
        device = next(model.parameters()).device
    except StopIteration:
        device = torch.device("cpu")
    order = sorted(range(total), key=lambda i: (len(analysed_pairs[i].premise.tokens)
                                                 + len(analysed_pairs[i].hypothesis.tokens)))
    vectors: np.ndarray | None = None
    probabilities: np.ndarray | None = None
    model.eval()
    with torch.no_grad():
        for start in range(0, total, batch_size):
            chosen = order[start:start + batch_size]
            batch = featurizer.encode([analysed_pairs[i] for i in chosen]).to(device)
            logits, trace = model(batch, trace=True)  # logits [B, C]
            entries = trace.of_type(Representation)
            if not entries:
                raise ProjectionError(f"{where}: the model emits no Representation trace entry, so it "
                                      "has no pooled pair vector to project")
            if entry_name is not None:
                if entry_name not in entries:
                    raise ProjectionError(f"{where}: no Representation entry named {entry_name!r} "
                                          f"(has {', '.join(entries)})")
                entry = entries[entry_name]
            else:
                entry = list(entries.values())[-1]
            block = entry.vector.detach().float().cpu().numpy()  # [B, d]
            chances = model.probabilities(logits.float()).cpu().numpy()  # [B, C]
            if vectors is None or probabilities is None:
                vectors = np.empty((total, block.shape[1]), dtype=np.float32)
                probabilities = np.empty((total, chances.shape[1]), dtype=np.float32)
            vectors[chosen] = block
            probabilities[chosen] = chances
            del trace
            if progress is not None:
                progress(min(start + batch_size, total), total)
    assert vectors is not None and probabilities is not None
    return PooledOutputs(vectors, probabilities)


def pooled_representations(loaded_checkpoint, analysed_pairs: Sequence, batch_size: int = 256,
                           entry_name: str | None = None,
                           progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The pooled vectors [N, d] of `pooled_outputs`, in the order of `analysed_pairs`."""
    return pooled_outputs(loaded_checkpoint, analysed_pairs, batch_size, entry_name, progress).vectors



# ------------------------------------------------------------------------------------------ cache

def default_cache_dir() -> Path:
    """`<cache root>/projections` (the cache root honours NLIVIS_CACHE_DIR)."""
    return cache_root() / "projections"


def default_numba_cache_dir() -> Path:
    """Where numba keeps UMAP's compiled code between processes: `<cache root>/numba`."""
    return cache_root() / "numba"


def checkpoint_fingerprint(checkpoint_path: str | Path) -> str:
    """sha256 over the checkpoint's model.safetensors and config.json (first 16 hex digits)."""
    folder = Path(checkpoint_path)
    parts = []
    for name in ("model.safetensors", "config.json"):
        path = folder / name
        if not path.is_file():
            raise ProjectionError(f"checkpoint {folder}: {name} is missing")
        parts.append(sha256_file(path))
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:16]


def _safe_name(split_key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in split_key)


def _entry_dir(checkpoint_path, split_key: str, cache_dir: str | Path | None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / checkpoint_fingerprint(checkpoint_path) / _safe_name(split_key)


BESIDE = "projections"
"""`<checkpoint>/projections/<sample>/`: layouts kept with a checkpoint (`keep_beside_checkpoint`; the shipped
checkpoints carry the Projection page's default view), read before the cache and never written by a view."""


def keep_beside_checkpoint(checkpoint_path: str | Path, split_key: str, method: str = "umap", seed: int = 0,
                           cache_dir: str | Path | None = None) -> Path:
    """Copy a computed layout of `split_key` (coordinates, probabilities, pair ids) from the cache into the
    checkpoint's own folder, sealed and stamped with the checkpoint's fingerprint, so a first view on any machine
    reads it instead of running the model and fitting the layout. Returns the folder."""
    entry = _entry_dir(checkpoint_path, split_key, cache_dir)
    names = (_projection_file(entry, method, seed).name, "probabilities.npy", "ids.json")
    contents = [read_sealed(entry / name) for name in names]
    if any(content is None for content in contents):
        raise ProjectionError(f"{split_key}: no computed {method} layout with probabilities and pair ids in {entry}")
    beside = Path(checkpoint_path) / BESIDE / _safe_name(split_key)
    beside.mkdir(parents=True, exist_ok=True)
    for name, content in zip(names, contents):
        write_sealed(beside / name, content)
    _save_json(beside / "checkpoint.json", {"fingerprint": checkpoint_fingerprint(checkpoint_path)})
    return beside


def _beside_checkpoint(checkpoint_path: str | Path, split_key: str, method: str, seed: int,
                       ids: Sequence[str] | None) -> ProjectedPairs | None:
    """The layout kept in the checkpoint's folder for these pairs, when it is there whole, sealed, of this very
    checkpoint (its fingerprint) and of the same pair ids; else None."""
    beside = Path(checkpoint_path) / BESIDE / _safe_name(split_key)
    if not beside.is_dir():
        return None
    stamp = read_sealed(beside / "checkpoint.json")
    if stamp is None or json.loads(stamp).get("fingerprint") != checkpoint_fingerprint(checkpoint_path):
        return None
    if ids is not None and _cached_ids(beside) != list(ids):
        return None
    coordinates = read_sealed_array(_projection_file(beside, method, seed))
    probabilities = read_sealed_array(beside / "probabilities.npy")
    if coordinates is None or probabilities is None or len(coordinates) != len(probabilities):
        return None
    return ProjectedPairs(coordinates, probabilities)


def _projection_file(entry: Path, method: str, seed: int) -> Path:
    return entry / (f"{method}-seed{seed}.npy" if method == "umap" else f"{method}.npy")


def _save_json(path: Path, data) -> None:
    atomic_write_json(path, data, sealed=True)


def _cached_ids(entry: Path) -> list[str] | None:
    data = read_sealed(entry / "ids.json")
    try:
        return None if data is None else json.loads(data)
    except ValueError:
        return None


def is_cached(checkpoint_path: str | Path, split_key: str, method: str = "umap", seed: int = 0,
              cache_dir: str | Path | None = None) -> bool:
    """Whether `cached_projection` would answer from disk (so the app can skip its progress bar)."""
    path = _projection_file(_entry_dir(checkpoint_path, split_key, cache_dir), method, seed)
    beside = _projection_file(Path(checkpoint_path) / BESIDE / _safe_name(split_key), method, seed)
    return any(file.is_file() and seal_path(file).is_file() for file in (path, beside))


@dataclass(frozen=True)
class ProjectedPairs:
    """A checkpoint's view of a sample of pairs: 2-D coordinates [N, 2] and class probabilities [N, C]."""

    coordinates: np.ndarray
    probabilities: np.ndarray

    def record(self) -> dict[str, Any]:
        """JSON-ready: each pair's coordinates [x, y] and class probabilities, in the order of the pairs."""
        return {"coordinates": np.round(self.coordinates, 6).tolist(),
                "probabilities": np.round(self.probabilities, 6).tolist()}


def cached_projection(checkpoint_path: str | Path, split_key: str,
                      vectors_fn: Callable[[], np.ndarray | PooledOutputs], method: str = "umap",
                      cache_dir: str | Path | None = None, seed: int = 0,
                      ids: Sequence[str] | None = None,
                      progress: Progress | None = None) -> np.ndarray:
    """The [N, 2] projection of a split's pooled vectors for a checkpoint, computed at most once.

    `vectors_fn()` returns the [N, d] vectors (e.g. a closure over `pooled_representations`) or a
    `PooledOutputs`; it is called only when the vectors are not cached yet. Cache layout, under
    `<cache_dir>/<checkpoint fingerprint>/<split_key>/`: vectors.npy, probabilities.npy (when known),
    umap-seed<seed>.npy / pca.npy, ids.json (when `ids` is given: a cache made for other pair ids is
    recomputed) and meta.json.
    """
    return _cached(checkpoint_path, split_key, vectors_fn, method, cache_dir, seed, ids, progress, False).coordinates


def projected_pairs(checkpoint_path: str | Path, split_key: str, outputs_fn: Callable[[], PooledOutputs],
                    method: str = "umap", cache_dir: str | Path | None = None, seed: int = 0,
                    ids: Sequence[str] | None = None, progress: Progress | None = None) -> ProjectedPairs:
    """Coordinates and class probabilities of the pairs for a checkpoint, each computed at most once per
    checkpoint × split key × ids (the cache of `cached_projection`): `outputs_fn()` (e.g. a closure over
    `pooled_outputs`) runs the model only when vectors or probabilities are not cached yet, so
    recolouring points by prediction reads a file instead of predicting again. A layout kept in the checkpoint's
    folder for these pairs (`keep_beside_checkpoint`) comes first."""
    if method in METHODS and (kept := _beside_checkpoint(checkpoint_path, split_key, method, seed, ids)) is not None:
        if progress is not None:
            progress("projection read from the checkpoint's folder", 1.0)
        return kept
    return _cached(checkpoint_path, split_key, outputs_fn, method, cache_dir, seed, ids, progress, True)


def _cached(checkpoint_path: str | Path, split_key: str, compute: Callable[[], np.ndarray | PooledOutputs],
            method: str, cache_dir: str | Path | None, seed: int, ids: Sequence[str] | None,
            progress: Progress | None, need_probabilities: bool) -> ProjectedPairs:
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {', '.join(METHODS)}")

    def report(message: str, fraction: float | None) -> None:
        if progress is not None:
            progress(message, fraction)

    report("checking the projection cache", 0.0)
    entry = _entry_dir(checkpoint_path, split_key, cache_dir)
    entry.mkdir(parents=True, exist_ok=True)
    wanted_ids = list(ids) if ids is not None else None
    target = _projection_file(entry, method, seed)
    if wanted_ids is None or _cached_ids(entry) == wanted_ids:
        coordinates, vectors = read_sealed_array(target), None
        probabilities = read_sealed_array(entry / "probabilities.npy")
    else:
        coordinates = vectors = probabilities = None
        for stale in entry.glob("*.npy"):
            stale.unlink(missing_ok=True)
    if coordinates is not None and (probabilities is not None or not need_probabilities):
        report("projection loaded from cache", 1.0)
        return ProjectedPairs(coordinates, probabilities if probabilities is not None else np.empty((len(coordinates), 0)))
    if coordinates is None:
        vectors = read_sealed_array(entry / "vectors.npy")
    if vectors is None or (need_probabilities and probabilities is None):
        report("computing pooled representations and predictions", 0.1)
        computed = compute()
        if isinstance(computed, PooledOutputs):
            vectors, probabilities = np.asarray(computed.vectors, dtype=np.float32), computed.probabilities
        elif need_probabilities:
            raise ProjectionError("the representation function gave no class probabilities (expected PooledOutputs)")
        else:
            vectors = np.asarray(computed, dtype=np.float32)
        if vectors.ndim != 2 or (wanted_ids is not None and len(vectors) != len(wanted_ids)):
            raise ProjectionError(f"vectors of shape {vectors.shape} do not fit "
                                  f"{len(wanted_ids) if wanted_ids is not None else 'N'} pairs")
        write_sealed_array(entry / "vectors.npy", vectors)
        if probabilities is not None:
            probabilities = np.asarray(probabilities, dtype=np.float32)
            write_sealed_array(entry / "probabilities.npy", probabilities)
        if wanted_ids is not None:
            _save_json(entry / "ids.json", wanted_ids)
    if coordinates is None:
        assert vectors is not None
        report("fitting UMAP" if method == "umap" else "computing PCA", 0.5)
        coordinates = project(vectors, method=method, seed=seed, progress=progress,
                              compiled_code_dir=default_numba_cache_dir())
        write_sealed_array(target, coordinates)
        _save_json(entry / "meta.json", {"checkpoint": str(Path(checkpoint_path).resolve()),
                                         "split_key": split_key, "pairs": int(len(vectors)),
                                         "dimension": int(vectors.shape[1]),
                                         "projections": sorted(p.name for p in entry.glob("*.npy")
                                                               if p.name not in {"vectors.npy", "probabilities.npy"})})
    report("projection computed", 1.0)
    return ProjectedPairs(coordinates, probabilities if probabilities is not None else np.empty((len(coordinates), 0)))


# ------------------------------------------------------------------------------------------ the app's table

def project_sample(loaded_checkpoint, items: Sequence, options: ProjectionOptions,
                   progress: Progress | None = None) -> ProjectedPairs:
    """The coordinates and class probabilities of the analysed pairs `items` for a loaded checkpoint, from the
    disk cache or computed (one model pass, one layout)."""
    return project_sample_of(loaded_checkpoint.path, lambda: loaded_checkpoint, items, options, progress)


def project_sample_of(checkpoint_path: str | Path, load: Callable[[], Any], items: Sequence, options: ProjectionOptions,
                      progress: Progress | None = None) -> ProjectedPairs:
    """`project_sample` of the checkpoint in folder `checkpoint_path`, which `load()` loads only when the layout or
    the probabilities are not on disk: a page showing a kept projection reads no weights and imports no torch."""
    if not items:
        raise ProjectionError(f"{options.sample} has no pairs")
    return projected_pairs(checkpoint_path, options.sample, lambda: pooled_outputs(load(), items),
                           method=options.method, cache_dir=options.cache_dir, seed=options.seed,
                           ids=[item.pair.id for item in items], progress=progress)


def projection_table(projected: ProjectedPairs, items: Sequence, labels: Sequence[str], split: str,
                     rows: Mapping[str, int], tags: Mapping[str, frozenset[str]] | None = None,
                     tag: str | None = None) -> pd.DataFrame:
    """The projected sample as a table — id, x, y, sentences, gold, prediction, genre, correctness, split, row
    (-1: not in the local split) and, with `tags`, `tag` (the chosen tag where a pair carries it, else "other")."""
    ids = [str(item.pair.id) for item in items]
    frame = pd.DataFrame({
        "id": ids, "x": projected.coordinates[:, 0], "y": projected.coordinates[:, 1],
        "premise": [item.pair.premise for item in items], "hypothesis": [item.pair.hypothesis for item in items],
        "gold": [item.pair.label or "(none)" for item in items],
        "prediction": [labels[i] for i in projected.probabilities.argmax(axis=1)],
        "genre": [item.pair.genre or "(none)" for item in items]})
    frame["correctness"] = ["right" if g == p else "wrong" if g != "(none)" else "(no gold)"
                            for g, p in zip(frame["gold"], frame["prediction"])]
    frame["split"], frame["row"] = split, [rows.get(pid, -1) for pid in ids]
    if tags is not None:
        frame["tag"] = [tag if tag and tag in tags.get(pid, ()) else "other" for pid in ids]
    return frame


def projection_subject(subject: SplitSample, options: ProjectionOptions,
                       progress: protocol.Progress) -> ProjectedPairs:
    """`project_sample` of the subject's pairs as the registered projection analysis runs it."""
    return project_sample(subject.loaded, subject.items, options, lambda message, fraction: progress(message))
