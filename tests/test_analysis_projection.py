"""Pooled representations from the trace, PCA/UMAP projections, and the on-disk cache."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from nlivis.analysis.projection import ProjectionError, project
from nlivis.models.trace import Representation, Trace
from nlivis.workflows.projection import (PooledOutputs, cached_projection, checkpoint_fingerprint, is_cached,
                                         keep_beside_checkpoint, pooled_outputs, pooled_representations,
                                         projected_pairs)


@dataclass
class _Sentence:
    tokens: tuple[str, ...]


@dataclass
class _Item:
    premise: _Sentence
    hypothesis: _Sentence


class _Batch:
    def __init__(self, lengths: torch.Tensor):
        self.lengths = lengths

    def to(self, device):
        return _Batch(self.lengths.to(device))


class _Featurizer:
    """Stand-in featurizer: a batch is just the two sentence lengths of each pair."""

    def __init__(self):
        self.batch_sizes = []

    def encode(self, items):
        self.batch_sizes.append(len(items))
        return _Batch(torch.tensor([[len(i.premise.tokens), len(i.hypothesis.tokens)] for i in items],
                                   dtype=torch.float32))


class _Model(nn.Module):
    """Pooled vector = (premise length, hypothesis length, 1) — easy to check order against."""

    def __init__(self, emit: bool = True):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.emit = emit

    def forward(self, batch, trace=False):
        # B batch
        pooled = torch.cat([batch.lengths * self.scale, torch.ones(len(batch.lengths), 1)], dim=1)
        logits = pooled[:, :3]
        if not trace:
            return logits
        record = Trace()
        if self.emit:
            record.add("pooled", Representation(pooled))
        assert not torch.is_grad_enabled()
        return logits, record

    def probabilities(self, logits):
        return torch.softmax(logits, dim=-1)


@dataclass
class _Loaded:
    model: nn.Module
    featurizer: _Featurizer
    path: str = "fake-checkpoint"


def _items(lengths):
    return [_Item(_Sentence(("w",) * p), _Sentence(("w",) * h)) for p, h in lengths]


def test_pooled_representations_keep_input_order_and_batch():
    lengths = [(5, 2), (1, 1), (9, 3), (2, 7), (4, 4)]
    loaded = _Loaded(_Model(), _Featurizer())
    seen = []
    vectors = pooled_representations(loaded, _items(lengths), batch_size=2,
                                     progress=lambda done, total: seen.append((done, total)))
    assert vectors.shape == (5, 3) and vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors[:, :2], np.array(lengths, dtype=np.float32))
    assert loaded.featurizer.batch_sizes == [2, 2, 1]
    assert seen == [(2, 5), (4, 5), (5, 5)]


def test_pooled_outputs_keep_the_probabilities_of_the_same_pass_in_input_order():
    lengths = [(5, 2), (1, 1), (9, 3)]
    outputs = pooled_outputs(_Loaded(_Model(), _Featurizer()), _items(lengths), batch_size=2)
    expected = torch.softmax(torch.tensor([[p, h, 1.0] for p, h in lengths]), dim=-1).numpy()
    np.testing.assert_allclose(outputs.probabilities, expected, rtol=1e-6)
    assert outputs.vectors.shape == (3, 3)


def counted_outputs(seed: int) -> tuple[list, Callable[[], PooledOutputs]]:
    """Twelve pairs' pooled vectors and probabilities from `seed`, and the list that grows by one at each call:
    how a test sees whether the model would have run."""
    calls: list = []

    def outputs_fn() -> PooledOutputs:
        calls.append(1)
        rng = np.random.default_rng(seed)
        return PooledOutputs(rng.normal(size=(12, 4)).astype(np.float32), rng.dirichlet(np.ones(3), size=12))

    return calls, outputs_fn


def test_projected_pairs_compute_predictions_once_and_recolour_from_the_cache(tmp_path):
    """Recolouring re-ran 1,000 predictions per click; now the model runs once per checkpoint × split."""
    checkpoint = _fake_checkpoint(tmp_path / "ckpt")
    ids = [str(i) for i in range(12)]
    calls, outputs_fn = counted_outputs(seed=2)

    cache = tmp_path / "cache"
    first = projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cache, ids=ids)
    again = projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cache, ids=ids)
    assert len(calls) == 1 and first.probabilities.shape == (12, 3)
    np.testing.assert_array_equal(first.probabilities, again.probabilities)
    np.testing.assert_array_equal(first.coordinates, again.coordinates)
    # a cache written before probabilities were kept gets them once, without refitting the projection
    (next(cache.rglob("probabilities.npy"))).unlink()
    third = projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cache, ids=ids)
    assert len(calls) == 2 and third.probabilities.shape == (12, 3)
    projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cache, ids=ids)
    assert len(calls) == 2
    with pytest.raises(ProjectionError, match="no class probabilities"):
        projected_pairs(checkpoint, "other", lambda: np.zeros((12, 4)), method="pca", cache_dir=cache, ids=ids)


UMAP_IN_A_NEW_PROCESS = """
import json, os, sys
import numpy as np
from numba.core import config  # numba has read its settings before nlivis points its cache elsewhere
from nlivis.analysis import projection
projection.PROGRESS_TICK_S = 0.01
from pathlib import Path
seen = []
points = np.random.default_rng(0).normal(size=(40, 5)).astype(np.float32)
coordinates = projection.project(points, method="umap", progress=lambda message, fraction: seen.append((message, fraction)),
                                 compiled_code_dir=Path(sys.argv[1]))
print(json.dumps({"shape": list(coordinates.shape), "seen": seen, "cache_dir": config.CACHE_DIR}))
"""
"""The first UMAP fit of a process: numba compiles (and so writes its disk cache) only once per process, so an
earlier fit in the test process (another test, on the same pytest worker) would leave nothing to check."""


@pytest.fixture(scope="module")
def first_umap_fit_of_a_process(tmp_path_factory) -> tuple[dict, Path]:
    """UMAP_IN_A_NEW_PROCESS run with no NUMBA_CACHE_DIR: what it printed, and the folder it was given for numba's
    compiled code."""
    compiled = tmp_path_factory.mktemp("first_fit") / "numba"
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", UMAP_IN_A_NEW_PROCESS, str(compiled)], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[1], env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), compiled


@pytest.fixture(scope="module")
def run_cache_holds_compiled_umap(first_umap_fit_of_a_process) -> None:
    """The run's numba cache (NUMBA_CACHE_DIR, tests/conftest.py) gets the code the new process compiled, one
    folder per source folder as numba lays it out, where it has none yet: this module's in-process fit and every
    later process of the run then load UMAP's code (about 4 CPU s) instead of compiling it again (about 30)."""
    run_cache = os.environ.get("NUMBA_CACHE_DIR")
    if run_cache is None:
        return
    for compiled in first_umap_fit_of_a_process[1].iterdir():
        target = Path(run_cache) / compiled.name
        if target.exists():
            continue
        staging = Path(run_cache) / f".{compiled.name}.{os.getpid()}"
        shutil.copytree(compiled, staging)
        try:
            staging.rename(target)  # whole, or not at all if another process wrote it meanwhile
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)


@pytest.mark.slow
def test_umap_fit_reports_progress_and_uses_the_numba_disk_cache(first_umap_fit_of_a_process):
    fitted, compiled = first_umap_fit_of_a_process
    assert fitted["shape"] == [40, 2]
    seen = fitted["seen"]
    # the fraction approaches 0.95 while the fit runs; in floats it reaches it after ~9 min (a loaded machine)
    assert seen and all(m.startswith("fitting UMAP on 40 points") and 0.5 <= f <= 0.95 for m, f in seen)
    assert fitted["cache_dir"] == str(compiled) and any(compiled.rglob("*.nbi"))
    # umap's own uncached functions (17 s of compiling in every new process) are now kept too
    assert any(compiled.rglob("*smooth_knn_dist*.nbi"))


def test_model_without_representation_is_a_clear_error():
    with pytest.raises(ProjectionError, match="fake-checkpoint: the model emits no Representation"):
        pooled_representations(_Loaded(_Model(emit=False), _Featurizer()), _items([(1, 1)]))


def test_pca_is_deterministic_and_finds_the_main_axis():
    rng = np.random.default_rng(0)
    line = rng.normal(size=(50, 1)) * np.array([[3.0, 4.0, 0.0]])  # all variance along (3, 4, 0)
    noisy = line + rng.normal(scale=0.01, size=line.shape)
    first, second = project(noisy, method="pca"), project(noisy, method="pca")
    np.testing.assert_array_equal(first, second)
    assert first.shape == (50, 2)
    expected = (noisy - noisy.mean(0)) @ np.array([3.0, 4.0, 0.0]) / 5.0
    np.testing.assert_allclose(np.abs(first[:, 0]), np.abs(expected), atol=0.05)
    assert np.var(first[:, 0]) > 100 * np.var(first[:, 1])


def test_project_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown projection method"):
        project(np.zeros((5, 3)), method="tsne")
    with pytest.raises(ProjectionError, match="NaN"):
        project(np.array([[np.nan, 1.0], [0.0, 1.0]]), method="pca")
    with pytest.warns(UserWarning, match="using PCA"):
        assert project(np.eye(3), method="umap").shape == (3, 2)


def test_a_layout_kept_beside_the_checkpoint_is_a_first_view_on_a_cold_cache(tmp_path):
    """The Projection page's first view of a shipped checkpoint ran the model and fitted the layout (14.6 s under
    load, bench/projection_first_view.py): a layout kept in the checkpoint's folder is read instead — only for the
    same pair ids and the very weights it was computed with."""
    checkpoint = _fake_checkpoint(tmp_path / "ckpt")
    ids = [str(i) for i in range(12)]
    calls, outputs_fn = counted_outputs(seed=3)

    first = projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=tmp_path / "a", ids=ids)
    keep_beside_checkpoint(checkpoint, "snli_dev-sample12", "pca", cache_dir=tmp_path / "a")
    cold = tmp_path / "cold"
    assert is_cached(checkpoint, "snli_dev-sample12", "pca", cache_dir=cold)
    kept = projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cold, ids=ids)
    assert len(calls) == 1 and not cold.exists(), "read from the checkpoint's folder, nothing computed or cached"
    np.testing.assert_array_equal(kept.coordinates, first.coordinates)
    np.testing.assert_array_equal(kept.probabilities, first.probabilities)
    projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=cold, ids=ids[::-1])
    assert len(calls) == 2, "other pairs: computed"
    (checkpoint / "model.safetensors").write_bytes(b"retrained")
    projected_pairs(checkpoint, "snli_dev-sample12", outputs_fn, method="pca", cache_dir=tmp_path / "b", ids=ids)
    assert len(calls) == 3, "other weights: computed"


def _fake_checkpoint(folder, weights=b"weights"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "config.json").write_text('{"model": {"name": "fake"}}', encoding="utf-8")
    return folder


def test_cache_second_call_does_not_recompute(tmp_path):
    checkpoint = _fake_checkpoint(tmp_path / "ckpt")
    calls = []

    def vectors_fn():
        calls.append(1)
        return np.random.default_rng(1).normal(size=(20, 4))

    messages = []
    first = cached_projection(checkpoint, "snli_dev", vectors_fn, method="pca", cache_dir=tmp_path / "cache",
                              ids=[str(i) for i in range(20)], progress=lambda m, f: messages.append(m))
    assert is_cached(checkpoint, "snli_dev", "pca", cache_dir=tmp_path / "cache")
    second = cached_projection(checkpoint, "snli_dev", vectors_fn, method="pca", cache_dir=tmp_path / "cache",
                               ids=[str(i) for i in range(20)])
    np.testing.assert_array_equal(first, second)
    assert len(calls) == 1
    assert "computing pooled representations and predictions" in messages
    stored = list((tmp_path / "cache").rglob("*"))
    assert {p.suffix for p in stored if p.is_file()} <= {".npy", ".json", ".seal"}  # .seal: size and sha256


def test_cache_is_keyed_by_checkpoint_content_split_and_ids(tmp_path):
    checkpoint = _fake_checkpoint(tmp_path / "ckpt")
    calls = []

    def vectors_fn():
        calls.append(1)
        return np.arange(30, dtype=np.float32).reshape(10, 3) ** 1.5

    cache = tmp_path / "cache"
    cached_projection(checkpoint, "snli_dev", vectors_fn, method="pca", cache_dir=cache)
    cached_projection(checkpoint, "snli_test", vectors_fn, method="pca", cache_dir=cache)
    assert len(calls) == 2
    before = checkpoint_fingerprint(checkpoint)
    _fake_checkpoint(checkpoint, weights=b"retrained")
    assert checkpoint_fingerprint(checkpoint) != before
    cached_projection(checkpoint, "snli_dev", vectors_fn, method="pca", cache_dir=cache)
    assert len(calls) == 3
    cached_projection(checkpoint, "snli_dev", vectors_fn, method="pca", cache_dir=cache,
                      ids=[str(i) for i in range(10)])
    assert len(calls) == 4  # the cache had no ids to match
    with pytest.raises(ProjectionError, match="model.safetensors is missing"):
        checkpoint_fingerprint(tmp_path / "empty")


@pytest.mark.slow
@pytest.mark.usefixtures("run_cache_holds_compiled_umap")
def test_umap_projection_is_deterministic_and_cached(tmp_path):
    checkpoint = _fake_checkpoint(tmp_path / "ckpt")
    rng = np.random.default_rng(0)
    clusters = np.vstack([rng.normal(loc=c, size=(30, 8)) for c in (0.0, 10.0)])
    compiled = tmp_path / "numba"  # as the app passes it (NUMBA_CACHE_DIR, the test run's one, takes precedence)
    first = project(clusters, method="umap", seed=3, compiled_code_dir=compiled)
    np.testing.assert_allclose(first, project(clusters, method="umap", seed=3, compiled_code_dir=compiled))
    assert first.shape == (60, 2)
    centre_a, centre_b = first[:30].mean(0), first[30:].mean(0)
    spread = max(first[:30].std(0).max(), first[30:].std(0).max())
    assert np.linalg.norm(centre_a - centre_b) > 3 * spread
    cached = cached_projection(checkpoint, "dev", lambda: clusters, method="umap", seed=3, cache_dir=tmp_path)
    np.testing.assert_allclose(cached, first)


def test_the_default_tag_splits_the_points_most_evenly():
    from nlivis.analysis.projection import informative_tag, tag_counts

    ids = [str(i) for i in range(10)]
    tags = {"0": frozenset({"ACTIVE/PASSIVE", "NEGATION"}), "1": frozenset({"NEGATION"}),
            **{str(i): frozenset({"QUANTIFIER"}) for i in range(2, 10)}}
    assert tag_counts(tags, ids) == {"ACTIVE/PASSIVE": 1, "NEGATION": 2, "QUANTIFIER": 8}
    assert informative_tag(tags, ids) == "NEGATION"  # 2 vs 8 beats QUANTIFIER's 8 vs 2 on the name; ACTIVE/PASSIVE 1 vs 9
    assert informative_tag({}, ids) is None


def test_exact_neighbours_match_a_brute_force_search():
    from nlivis.analysis.projection import exact_neighbours

    points = np.random.default_rng(4).normal(size=(50, 6)).astype(np.float32)
    indices, distances = exact_neighbours(points, 5)
    full = np.linalg.norm(points[:, None] - points[None], axis=-1)
    np.testing.assert_array_equal(indices, np.argsort(full, axis=1, kind="stable")[:, :5])
    np.testing.assert_allclose(distances, np.sort(full, axis=1)[:, :5], atol=1e-4)
    assert (indices[:, 0] == np.arange(50)).all()
