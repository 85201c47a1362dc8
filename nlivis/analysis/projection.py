"""2-D maps of vectors: the pooled pair representations a model builds (its trace's `Representation` entry,
pooled and cached on disk by `nlivis.workflows.projection`).

UMAP (umap-learn, fixed random_state) shows neighbourhoods; PCA (numpy SVD) is the fast, exact
fallback. The first UMAP fit in a process compiles numba code; numba's compiled code is
cached on disk (NUMBA_CACHE_DIR, by default under the user cache) so later processes load it, and the
`progress` callback ticks while UMAP fits.
"""
from __future__ import annotations

import importlib
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

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
"""numba's own setting; when unset, nlivis points it at the folder `project` is given before UMAP is imported."""


class ProjectionError(RuntimeError):
    """A projection that cannot be computed (no Representation in the trace, bad vectors, ...)."""


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


def use_numba_disk_cache(default_folder: Path) -> Path:
    """Point numba's cache at `default_folder` (unless NUMBA_CACHE_DIR says otherwise) so compiled UMAP code
    is written once and loaded by every later process, whether or not site-packages is writable. The caller
    chooses the folder (`workflows.projection` passes the user cache's): this module writes nothing itself.
    Returns the folder used."""
    folder = Path(os.environ.setdefault(NUMBA_CACHE_ENV, str(default_folder)))
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
              progress: Progress | None, compiled_code_dir: Path | None) -> np.ndarray:
    """UMAP's fit in a worker thread, so `progress` can tick with the elapsed time while it runs (UMAP
    itself reports nothing a caller could show)."""
    global _UMAP_FITS_IN_PROCESS
    if compiled_code_dir is not None:
        use_numba_disk_cache(compiled_code_dir)
    result: dict[str, object] = {}

    def fit() -> None:
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*n_jobs.*")  # random_state forces one thread
                warnings.filterwarnings("ignore", message=".*ParametricUMAP.*")  # TensorFlow is not used
                import umap

                if compiled_code_dir is not None:
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
            progress: Progress | None = None, compiled_code_dir: Path | None = None) -> np.ndarray:
    """[N, d] → [N, 2] with UMAP (fixed random_state = seed) or PCA. Deterministic for a given seed.
    `compiled_code_dir`: where numba keeps UMAP's compiled code between processes (None: numba's own choice).
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
    return _fit_umap(vectors, seed, n_neighbors, min_dist, progress, compiled_code_dir)


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
