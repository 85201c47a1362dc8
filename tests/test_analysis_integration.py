"""The analysis layer on a real (tiny, freshly trained) checkpoint: predictions file, pooled vectors,
projection cache, tag breakdown."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

helpers = pytest.importorskip("tests.fixtures.training.helpers",
                              reason="the training fixtures (tests/fixtures/training) are not present")


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("analysis_ckpt")
    helpers.train_tiny(root / "tiny", root / "cache", max_steps=2)
    return root


@pytest.mark.slow
def test_checkpoint_analysis_end_to_end(trained):
    from nlivis.analysis.breakdown import accuracy_by_tag, confusion_matrix
    from nlivis.store.predictions import find_prediction_files, read_predictions
    from nlivis.analysis.projection import cached_projection, pooled_representations
    from nlivis.analysis.tags import tag_pairs
    from nlivis.data.protocols import SplitRef
    from nlivis.features.dataset import load_split_analysed
    from nlivis.inference import load_checkpoint

    folder = trained / "tiny"
    predictions = read_predictions(find_prediction_files(folder)["snli_dev"])
    loaded = load_checkpoint(folder)
    items, _ = load_split_analysed(SplitRef("snli", "dev"), helpers.FIXTURE_DIR, trained / "cache")
    assert [p.id for p in predictions] == [item.pair.id for item in items]

    one_by_one = pooled_representations(loaded, items, batch_size=1)
    batched = pooled_representations(loaded, items, batch_size=5)
    assert one_by_one.shape[0] == len(items)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-4)

    calls = []
    coordinates = cached_projection(folder, "snli_dev", lambda: calls.append(1) or batched, method="pca",
                                    cache_dir=trained / "projections", ids=[i.pair.id for i in items])
    assert coordinates.shape == (len(items), 2)
    cached_projection(folder, "snli_dev", lambda: calls.append(1) or batched, method="pca",
                      cache_dir=trained / "projections", ids=[i.pair.id for i in items])
    assert len(calls) == 1

    tags = tag_pairs([item.pair for item in items])
    table = accuracy_by_tag(predictions, tags)
    assert table.attrs["pairs"] == len(items)
    assert confusion_matrix(predictions, loaded.labels).to_numpy().sum() == len(items)
