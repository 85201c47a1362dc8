"""2-D maps of the pooled pair representations a model builds (its trace's `Representation` entry).

UMAP (umap-learn, fixed random_state) shows neighbourhoods; PCA (numpy SVD) is the fast, exact
fallback. Both the vectors and the projections are cached on disk as .npy / .json (never pickle),
keyed by the checkpoint's content (sha256 of model.safetensors and config.json) and the split, so a
view re-opened later does not recompute anything. The same pass that pools the vectors keeps the
model's class probabilities, cached beside them, so colouring points by prediction or correctness never
runs the model again. The first UMAP fit in a process compiles numba code; numba's compiled code is
cached on disk (NUMBA_CACHE_DIR, by default under the user cache) so later processes load it, and the
`progress` callback ticks while UMAP fits.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import torch

from nlivis.models.trace import Representation
from nlivis.store.files import atomic_write_bytes, atomic_write_json, cache_root, sha256_file

METHODS = ("umap", "pca")
DEFAULT_NEIGHBOURS = 15
"""UMAP n_neighbors: umap-learn's default; balances local and global structure."""
DEFAULT_MIN_DIST = 0.1
"""UMAP min_dist: umap-learn's default."""
MIN_UMAP_POINTS = 4
"""Fewer points than this cannot be laid out by UMAP's spectral initialisation; PCA is used instead."""

Progress = Callable[[str, float | None], None]
"""progress(message, fraction done or None when unknown)."""
PROGRESS_TICK_S = 0.5
"""How often the progress callback hears from a running UMAP fit."""
NUMBA_CACHE_ENV = "NUMBA_CACHE_DIR"
"""numba's own setting; when unset, nlivis points it at `default_numba_cache_dir()` before UMAP is imported."""


class ProjectionError(RuntimeError):
    """A projection that cannot be computed (no Representation in the trace, bad vectors, ...)."""


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


# ------------------------------------------------------------------------------------- projections

def _pca(vectors: np.ndarray) -> np.ndarray:
    """First two principal components via SVD; each axis's sign is fixed so that its largest-magnitude
    loading is positive (SVD signs are otherwise arbitrary)."""
    centered = vectors - vectors.mean(axis=0, keepdims=True)
    _, _, components = np.linalg.svd(centered, full_matrices=False)
    components = components[:2]
    signs = np.sign(components[np.arange(len(components)), np.abs(components).argmax(axis=1)])
    signs[signs == 0] = 1.0
    coordinates = centered @ (components * signs[:, None]).T
    if coordinates.shape[1] < 2:  # one feature or a single point: pad the missing axis with zeros
        coordinates = np.hstack([coordinates, np.zeros((len(coordinates), 2 - coordinates.shape[1]))])
    return coordinates.astype(np.float32)


def default_numba_cache_dir() -> Path:
    """Where numba keeps UMAP's compiled code between processes: `<cache root>/numba`."""
    return cache_root() / "numba"


def use_numba_disk_cache() -> Path:
    """Point numba's cache at the user cache (unless NUMBA_CACHE_DIR says otherwise) so compiled UMAP code
    is written once and loaded by every later process, whether or not site-packages is writable.
    Returns the folder used."""
    folder = Path(os.environ.setdefault(NUMBA_CACHE_ENV, str(default_numba_cache_dir())))
    folder.mkdir(parents=True, exist_ok=True)
    if "numba" in sys.modules:  # imported before us: numba read its settings already; update them
        from numba.core import config

        config.CACHE_DIR = str(folder)
    return folder


NEIGHBOUR_BLOCK = 1024
"""Rows of the distance matrix computed at once by `exact_neighbours` (1024 × N floats)."""


def exact_neighbours(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest neighbours of every vector by Euclidean distance, each point itself first:
    (indices [N, k] int64, distances [N, k] float32). Plain numpy, so UMAP is handed its neighbour graph
    instead of compiling numba's nearest-neighbour code (13 s of the first fit in a process here)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    squared = np.einsum("nd,nd->n", vectors, vectors)
    indices = np.empty((len(vectors), k), dtype=np.int64)
    distances = np.empty((len(vectors), k), dtype=np.float32)
    for start in range(0, len(vectors), NEIGHBOUR_BLOCK):
        block = slice(start, start + NEIGHBOUR_BLOCK)
        d2 = np.maximum(squared[block, None] + squared[None, :] - 2.0 * vectors[block] @ vectors.T, 0.0)  # [b, N]
        rows = np.arange(d2.shape[0])
        d2[rows, rows + start] = -1.0  # each point is its own first neighbour, whatever rounding says
        nearest = np.argpartition(d2, k - 1, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(d2, nearest, axis=1), axis=1, kind="stable")
        indices[block] = np.take_along_axis(nearest, order, axis=1)
        distances[block] = np.sqrt(np.maximum(np.take_along_axis(d2, indices[block], axis=1), 0.0))
    return indices, distances


UMAP_MODULES = ("umap.umap_", "umap.layouts", "umap.spectral", "umap.utils", "umap.sparse")
"""umap-learn modules whose numba functions `cache_umap_compilation` makes cache their compiled code."""


def cache_umap_compilation() -> int:
    """Make every numba function of umap-learn that does not cache its compiled code do so (umap caches
    some, but compiles `smooth_knn_dist`, `compute_membership_strengths` and the layout epoch again in
    every process: 17 s of a first fit here). The code is unchanged; only where its machine code is kept.
    Returns how many functions were switched."""
    import importlib

    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    switched = 0
    for name in UMAP_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, CPUDispatcher) and isinstance(value._cache, NullCache):
                value.enable_caching()
                switched += 1
    return switched


_UMAP_FITS_IN_PROCESS = 0
"""How many UMAP fits this process has finished (the first one loads or compiles numba code)."""


def _fit_umap(vectors: np.ndarray, seed: int, n_neighbors: int, min_dist: float,
              progress: Progress | None) -> np.ndarray:
    """UMAP's fit in a worker thread, so `progress` can tick with the elapsed time while it runs (UMAP
    itself reports nothing a caller could show)."""
    global _UMAP_FITS_IN_PROCESS
    use_numba_disk_cache()
    result: dict[str, object] = {}

    def fit() -> None:
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*n_jobs.*")  # random_state forces one thread
                warnings.filterwarnings("ignore", message=".*ParametricUMAP.*")  # TensorFlow is not used
                import umap

                cache_umap_compilation()
                warnings.filterwarnings("ignore", message=".*knn_search_index.*")  # no transform() of new points
                neighbours = min(n_neighbors, len(vectors) - 1)
                knn_indices, knn_distances = exact_neighbours(vectors, neighbours)
                reducer = umap.UMAP(n_components=2, n_neighbors=neighbours, min_dist=min_dist, random_state=seed,
                                    precomputed_knn=(knn_indices, knn_distances), force_approximation_algorithm=True)
                result["coordinates"] = reducer.fit_transform(vectors).astype(np.float32)
        except BaseException as error:  # re-raised in the caller's thread
            result["error"] = error

    first = _UMAP_FITS_IN_PROCESS == 0
    expected_s = 15.0 if first else 3.0
    worker = threading.Thread(target=fit, name="umap-fit", daemon=True)
    started = time.perf_counter()
    worker.start()
    while worker.is_alive():
        worker.join(PROGRESS_TICK_S)
        if progress is not None and worker.is_alive():
            elapsed = time.perf_counter() - started
            note = " (the first fit in a new process loads numba's compiled code)" if first else ""
            progress(f"fitting UMAP on {len(vectors)} points: {elapsed:.0f} s{note}",
                     0.5 + 0.45 * (1.0 - float(np.exp(-elapsed / expected_s))))
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    _UMAP_FITS_IN_PROCESS += 1
    return result["coordinates"]  # type: ignore[return-value]


def project(vectors: np.ndarray, method: str = "umap", seed: int = 0,
            n_neighbors: int = DEFAULT_NEIGHBOURS, min_dist: float = DEFAULT_MIN_DIST,
            progress: Progress | None = None) -> np.ndarray:
    """[N, d] → [N, 2] with UMAP (fixed random_state = seed) or PCA. Deterministic for a given seed.
    `progress(message, fraction)` ticks every PROGRESS_TICK_S while UMAP fits."""
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {', '.join(METHODS)}")
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) == 0:
        raise ProjectionError(f"expected vectors of shape [N, d] with N ≥ 1, got {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise ProjectionError("the vectors contain NaN or infinite values")
    if method == "pca" or len(vectors) < MIN_UMAP_POINTS:
        if method == "umap":
            warnings.warn(f"UMAP needs at least {MIN_UMAP_POINTS} points; using PCA for {len(vectors)}",
                          stacklevel=2)
        return _pca(vectors)
    return _fit_umap(vectors, seed, n_neighbors, min_dist, progress)


# ------------------------------------------------------------------------------------------ cache

def default_cache_dir() -> Path:
    """`<cache root>/projections` (the cache root honours NLIVIS_CACHE_DIR)."""
    return cache_root() / "projections"


def checkpoint_fingerprint(checkpoint_path: str | Path) -> str:
    """sha256 over the checkpoint's model.safetensors and config.json (first 16 hex digits)."""
    folder = Path(checkpoint_path)
    parts = []
    for name in ("model.safetensors", "config.json"):
        path = folder / name
        if not path.is_file():
            raise ProjectionError(f"checkpoint {folder}: {name} is missing")
        stat = path.stat()
        parts.append(_file_sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns))
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:16]


@lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """Hash of a file, memoised on (path, size, mtime) so app reruns do not re-read large weights."""
    return sha256_file(path)


def _entry_dir(checkpoint_path, split_key: str, cache_dir: str | Path | None) -> Path:
    safe_split = "".join(c if c.isalnum() or c in "-_." else "_" for c in split_key)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / checkpoint_fingerprint(checkpoint_path) / safe_split


def _projection_file(entry: Path, method: str, seed: int) -> Path:
    return entry / (f"{method}-seed{seed}.npy" if method == "umap" else f"{method}.npy")


def _save_npy(path: Path, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(path, buffer.getvalue())


def _load_npy(path: Path) -> np.ndarray | None:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None  # absent or damaged: recompute


def _save_json(path: Path, data) -> None:
    atomic_write_json(path, data)


def _cached_ids(entry: Path) -> list[str] | None:
    try:
        return json.loads((entry / "ids.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_cached(checkpoint_path: str | Path, split_key: str, method: str = "umap", seed: int = 0,
              cache_dir: str | Path | None = None) -> bool:
    """Whether `cached_projection` would answer from disk (so the app can skip its progress bar)."""
    return _projection_file(_entry_dir(checkpoint_path, split_key, cache_dir), method, seed).is_file()


@dataclass(frozen=True)
class ProjectedPairs:
    """A checkpoint's view of a sample of pairs: 2-D coordinates [N, 2] and class probabilities [N, C]."""

    coordinates: np.ndarray
    probabilities: np.ndarray


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
    recolouring points by prediction reads a file instead of predicting again."""
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
        coordinates, vectors = _load_npy(target), None
        probabilities = _load_npy(entry / "probabilities.npy")
    else:
        coordinates = vectors = probabilities = None
        for stale in entry.glob("*.npy"):
            stale.unlink(missing_ok=True)
    if coordinates is not None and (probabilities is not None or not need_probabilities):
        report("projection loaded from cache", 1.0)
        return ProjectedPairs(coordinates, probabilities if probabilities is not None else np.empty((len(coordinates), 0)))
    if coordinates is None:
        vectors = _load_npy(entry / "vectors.npy")
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
        _save_npy(entry / "vectors.npy", vectors)
        if probabilities is not None:
            probabilities = np.asarray(probabilities, dtype=np.float32)
            _save_npy(entry / "probabilities.npy", probabilities)
        if wanted_ids is not None:
            _save_json(entry / "ids.json", wanted_ids)
    if coordinates is None:
        assert vectors is not None
        report("fitting UMAP" if method == "umap" else "computing PCA", 0.5)
        coordinates = project(vectors, method=method, seed=seed, progress=progress)
        _save_npy(target, coordinates)
        _save_json(entry / "meta.json", {"checkpoint": str(Path(checkpoint_path).resolve()),
                                         "split_key": split_key, "pairs": int(len(vectors)),
                                         "dimension": int(vectors.shape[1]),
                                         "projections": sorted(p.name for p in entry.glob("*.npy")
                                                               if p.name not in {"vectors.npy", "probabilities.npy"})})
    report("projection computed", 1.0)
    return ProjectedPairs(coordinates, probabilities if probabilities is not None else np.empty((len(coordinates), 0)))


# ------------------------------------------------------------------------------------- colouring

def tag_counts(tags: Mapping[str, frozenset[str]], ids: Sequence[str]) -> dict[str, int]:
    """Tag → how many of the pairs `ids` carry it (tags no pair carries are absent)."""
    counts: dict[str, int] = {}
    for pair_id in ids:
        for tag in tags.get(pair_id, ()):
            counts[tag] = counts.get(tag, 0) + 1
    return counts


def informative_tag(tags: Mapping[str, frozenset[str]], ids: Sequence[str]) -> str | None:
    """The tag that splits the points most evenly (the largest smaller side, tag vs other): colouring
    1,000 points by a tag 3 of them carry shows nothing. Ties go to the alphabetically first; None when
    no pair carries a tag."""
    counts = tag_counts(tags, ids)
    if not counts:
        return None
    return min(counts, key=lambda tag: (-min(counts[tag], len(ids) - counts[tag]), tag))
