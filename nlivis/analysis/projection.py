"""2-D maps of the pooled pair representations a model builds (its trace's `Representation` entry).

UMAP (umap-learn, fixed random_state) shows neighbourhoods; PCA (numpy SVD) is the fast, exact
fallback. Both the vectors and the projections are cached on disk as .npy / .json (never pickle),
keyed by the checkpoint's content (sha256 of model.safetensors and config.json) and the split, so a
view re-opened later does not recompute anything. The first UMAP fit in a process compiles numba
code (~30 s); the `progress` callback lets the app say so.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from nlivis.models.trace import Representation

METHODS = ("umap", "pca")
DEFAULT_NEIGHBOURS = 15
"""UMAP n_neighbors: umap-learn's default; balances local and global structure."""
DEFAULT_MIN_DIST = 0.1
"""UMAP min_dist: umap-learn's default."""
MIN_UMAP_POINTS = 4
"""Fewer points than this cannot be laid out by UMAP's spectral initialisation; PCA is used instead."""

Progress = Callable[[str, float | None], None]
"""progress(message, fraction done or None when unknown)."""


class ProjectionError(RuntimeError):
    """A projection that cannot be computed (no Representation in the trace, bad vectors, ...)."""


# ------------------------------------------------------------------------------ representations

def pooled_representations(loaded_checkpoint, analyzed_pairs: Sequence, batch_size: int = 256,
                           entry_name: str | None = None,
                           progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The pooled vector [N, d] the model computes for each pair, in the order of `analyzed_pairs`.

    Runs the checkpoint's model in eval mode without gradients on batches made by its featurizer,
    with tracing on, and keeps the trace's `Representation` entry (the last one, or the one named
    `entry_name`). Pairs are batched by length (less padding) and put back in input order.
    `progress(done, total)` is called after each batch. Tracing keeps every internal of a batch
    alive at once (DIIN's interaction tensor is B·P·H·d floats), so large models want a smaller batch.
    """
    model, featurizer = loaded_checkpoint.model, loaded_checkpoint.featurizer
    where = f"checkpoint {getattr(loaded_checkpoint, 'path', '?')}"
    total = len(analyzed_pairs)
    if total == 0:
        raise ProjectionError(f"{where}: no pairs to represent")
    try:
        device = next(model.parameters()).device
    except StopIteration:
        device = torch.device("cpu")
    order = sorted(range(total), key=lambda i: (len(analyzed_pairs[i].premise.tokens)
                                                 + len(analyzed_pairs[i].hypothesis.tokens)))
    vectors: np.ndarray | None = None
    model.eval()
    with torch.no_grad():
        for start in range(0, total, batch_size):
            chosen = order[start:start + batch_size]
            batch = featurizer.encode([analyzed_pairs[i] for i in chosen]).to(device)
            _, trace = model(batch, trace=True)
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
            block = entry.vector.detach().float().cpu().numpy()
            if vectors is None:
                vectors = np.empty((total, block.shape[1]), dtype=np.float32)
            vectors[chosen] = block
            del trace
            if progress is not None:
                progress(min(start + batch_size, total), total)
    assert vectors is not None
    return vectors


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


def project(vectors: np.ndarray, method: str = "umap", seed: int = 0,
            n_neighbors: int = DEFAULT_NEIGHBOURS, min_dist: float = DEFAULT_MIN_DIST) -> np.ndarray:
    """[N, d] → [N, 2] with UMAP (fixed random_state = seed) or PCA. Deterministic for a given seed."""
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
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*n_jobs.*")  # random_state forces one thread
        warnings.filterwarnings("ignore", message=".*ParametricUMAP.*")  # TensorFlow is not used
        import umap

        reducer = umap.UMAP(n_components=2, n_neighbors=min(n_neighbors, len(vectors) - 1),
                            min_dist=min_dist, random_state=seed)
        return reducer.fit_transform(vectors).astype(np.float32)


# ------------------------------------------------------------------------------------------ cache

def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "nlivis" / "projections"


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
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _entry_dir(checkpoint_path, split_key: str, cache_dir: str | Path | None) -> Path:
    safe_split = "".join(c if c.isalnum() or c in "-_." else "_" for c in split_key)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / checkpoint_fingerprint(checkpoint_path) / safe_split


def _projection_file(entry: Path, method: str, seed: int) -> Path:
    return entry / (f"{method}-seed{seed}.npy" if method == "umap" else f"{method}.npy")


def _save_npy(path: Path, array: np.ndarray) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npy", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _load_npy(path: Path) -> np.ndarray | None:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None  # absent or damaged: recompute


def _save_json(path: Path, data) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
    os.replace(temporary, path)


def _cached_ids(entry: Path) -> list[str] | None:
    try:
        return json.loads((entry / "ids.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_cached(checkpoint_path: str | Path, split_key: str, method: str = "umap", seed: int = 0,
              cache_dir: str | Path | None = None) -> bool:
    """Whether `cached_projection` would answer from disk (so the app can skip its progress bar)."""
    return _projection_file(_entry_dir(checkpoint_path, split_key, cache_dir), method, seed).is_file()


def cached_projection(checkpoint_path: str | Path, split_key: str,
                      vectors_fn: Callable[[], np.ndarray], method: str = "umap",
                      cache_dir: str | Path | None = None, seed: int = 0,
                      ids: Sequence[str] | None = None,
                      progress: Progress | None = None) -> np.ndarray:
    """The [N, 2] projection of a split's pooled vectors for a checkpoint, computed at most once.

    `vectors_fn()` returns the [N, d] vectors (e.g. a closure over `pooled_representations`); it is
    called only when the vectors are not cached yet. Cache layout, under
    `<cache_dir>/<checkpoint fingerprint>/<split_key>/`: vectors.npy, umap-seed<seed>.npy / pca.npy,
    ids.json (when `ids` is given: a cache made for other pair ids is recomputed) and meta.json.
    """
    if method not in METHODS:
        raise ValueError(f"unknown projection method {method!r}; choose one of {', '.join(METHODS)}")

    def report(message: str, fraction: float | None) -> None:
        if progress is not None:
            progress(message, fraction)

    report("checking the projection cache", 0.0)
    entry = _entry_dir(checkpoint_path, split_key, cache_dir)
    entry.mkdir(parents=True, exist_ok=True)
    wanted_ids = list(ids) if ids is not None else None
    ids_match = wanted_ids is None or _cached_ids(entry) == wanted_ids
    target = _projection_file(entry, method, seed)
    if ids_match:
        coordinates = _load_npy(target)
        if coordinates is not None:
            report("projection loaded from cache", 1.0)
            return coordinates
        vectors = _load_npy(entry / "vectors.npy")
    else:
        vectors = None
        for stale in entry.glob("*.npy"):
            stale.unlink(missing_ok=True)
    if vectors is None:
        report("computing pooled representations", 0.1)
        vectors = np.asarray(vectors_fn(), dtype=np.float32)
        if vectors.ndim != 2 or (wanted_ids is not None and len(vectors) != len(wanted_ids)):
            raise ProjectionError(f"vectors of shape {vectors.shape} do not fit "
                                  f"{len(wanted_ids) if wanted_ids is not None else 'N'} pairs")
        _save_npy(entry / "vectors.npy", vectors)
        if wanted_ids is not None:
            _save_json(entry / "ids.json", wanted_ids)
    if method == "umap":
        report("fitting UMAP (the first fit in a session compiles numba code, about 30 s)", 0.5)
    else:
        report("computing PCA", 0.5)
    coordinates = project(vectors, method=method, seed=seed)
    _save_npy(target, coordinates)
    _save_json(entry / "meta.json", {"checkpoint": str(Path(checkpoint_path).resolve()),
                                     "split_key": split_key, "pairs": int(len(vectors)),
                                     "dimension": int(vectors.shape[1]),
                                     "projections": sorted(p.name for p in entry.glob("*.npy")
                                                           if p.name != "vectors.npy")})
    report("projection computed", 1.0)
    return coordinates
