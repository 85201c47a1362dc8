"""scripts/compact_checkpoints.py on a tiny trained checkpoint made to look like an old one: plain
predictions, fp32 weights, an fp32 shared embedding file."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from nlivis.store.predictions import find_prediction_files, read_predictions, write_predictions
from nlivis.store.checkpoints import EMBEDDING_TENSOR
from nlivis.inference import load_checkpoint
from nlivis.store.weights import rewrite_checkpoint
from tests.conftest import load_script
from tests.fixtures.training.helpers import FIXTURE_DIR, train_tiny



def run_script(*args: str) -> int:
    module = load_script("compact_checkpoints")
    argv, sys.argv = sys.argv, ["compact_checkpoints.py", *args]
    try:
        return module.main()
    finally:
        sys.argv = argv


@pytest.fixture
def old_style(tmp_path) -> Path:
    """A complete checkpoint with uncompressed predictions and fp32 weights (as older code wrote them)."""
    folder = tmp_path / "ckpts" / "tiny"
    train_tiny(folder, tmp_path / "cache")
    loaded = load_checkpoint(folder)
    config = json.loads((folder / "config.json").read_text())
    state = {k: v for k, v in loaded.model.state_dict().items() if k not in config["weights"]["excluded_keys"]}
    config["weights"]["dtype"] = "float32"
    config["fp16_check"]["stored_as"] = "float32"
    rewrite_checkpoint(folder, config=config, weights=(state, torch.float32))
    for key, path in find_prediction_files(folder).items():
        write_predictions(folder / f"predictions_{key}.jsonl", read_predictions(path))
        path.unlink()
    return folder


def test_compaction_keeps_what_the_checkpoint_claims(old_style, tmp_path):
    folder = old_style
    before = {key: read_predictions(path) for key, path in find_prediction_files(folder).items()}
    embedding_file = (folder / json.loads((folder / "config.json").read_text())["embeddings"]["file"]).resolve()
    assert load_file(str(embedding_file))[EMBEDDING_TENSOR].dtype == torch.float32

    assert run_script("--checkpoints", str(folder.parent), "--data-dir", str(FIXTURE_DIR),
                      "--cache-dir", str(tmp_path / "cache")) == 0

    files = find_prediction_files(folder)
    assert set(files) == set(before) and all(p.name.endswith(".jsonl.gz") for p in files.values())
    assert not list(folder.glob("predictions_*.jsonl"))
    loaded = load_checkpoint(folder)  # manifest, hashes and shared file all check out
    config = loaded.config
    # on 12 dev pairs the rule allows no flipped label at all; whatever it decided is recorded and consistent
    weights = load_file(str(folder / "model.safetensors"))
    stored = {t.dtype for t in weights.values() if t.is_floating_point()}
    assert stored == {torch.float16 if config["weights"]["dtype"] == "float16" else torch.float32}
    if config["weights"]["dtype"] == "float16":
        assert config["fp16_check"]["predictions_changed_by_fp16"] == 0
    select = loaded.metrics["select_split"]
    rows = read_predictions(files[select])
    assert sum(r.gold == r.predicted for r in rows) / len(rows) == pytest.approx(loaded.metrics["best_dev_accuracy"])
    assert [r.id for r in rows] == [r.id for r in before[select]]

    from nlivis.features.dataset import load_split_analysed
    from nlivis.data.protocols import SplitRef
    from nlivis.workflows.evaluate import evaluate_checkpoint

    items, _ = load_split_analysed(SplitRef("snli", "dev"), FIXTURE_DIR, tmp_path / "cache")
    again = evaluate_checkpoint(loaded, items)  # what `nlivis evaluate` reproduces
    assert [r["predicted"] for r in again.predictions] == [r.predicted for r in rows]
    for fresh, saved in zip(again.predictions, rows):
        assert max(abs(a - b) for a, b in zip(fresh["probs"], saved.probs)) < 1e-3


def test_dry_run_writes_nothing(old_style, tmp_path):
    listing = sorted((p.relative_to(old_style.parent), p.stat().st_size) for p in old_style.parent.rglob("*") if p.is_file())
    assert run_script("--checkpoints", str(old_style.parent), "--data-dir", str(FIXTURE_DIR),
                      "--cache-dir", str(tmp_path / "cache"), "--dry-run") == 0
    assert sorted((p.relative_to(old_style.parent), p.stat().st_size)
                  for p in old_style.parent.rglob("*") if p.is_file()) == listing


def test_missing_data_leaves_weights_alone(old_style, tmp_path, capsys):
    assert run_script("--checkpoints", str(old_style.parent), "--data-dir", str(tmp_path / "nowhere")) == 0
    assert "splits unavailable" in capsys.readouterr().out
    assert load_checkpoint(old_style).config["weights"]["dtype"] == "float32"
    assert all(p.name.endswith(".gz") for p in find_prediction_files(old_style).values())  # step 1 needs no data


def test_an_existing_fp16_file_of_the_same_rows_is_reused_byte_for_byte(old_style, tmp_path):
    """A retrained checkpoint whose rows another checkpoint already uses in fp16: the file other checkpoints record
    by sha256 must not be rewritten (its bytes, not its rows, would change)."""
    from nlivis.store.files import sha256_file
    from nlivis.store.weights import save_tensors

    folder = old_style
    fp32_file = (folder / json.loads((folder / "config.json").read_text())["embeddings"]["file"]).resolve()
    existing = fp32_file.with_name(fp32_file.stem + "-fp16.safetensors")
    rows = load_file(str(fp32_file))[EMBEDDING_TENSOR].half()
    save_tensors({EMBEDDING_TENSOR: rows}, existing, metadata={"source": "an earlier compaction"})
    before = existing.read_bytes()
    assert run_script("--checkpoints", str(folder.parent), "--data-dir", str(FIXTURE_DIR),
                      "--cache-dir", str(tmp_path / "cache")) == 0
    assert existing.read_bytes() == before and not fp32_file.exists()
    config = json.loads((folder / "config.json").read_text())
    assert config["embeddings"]["file"].endswith(existing.name) and config["embeddings"]["sha256"] == sha256_file(existing)
    load_checkpoint(folder)


def test_an_existing_extension_of_the_same_rows_is_reused_byte_for_byte(tmp_path):
    """A retrained checkpoint whose rows are already stored as an extension other checkpoints record by sha256:
    the extension is reused as it is; one holding other rows stops the script before anything changes."""
    from nlivis.store.embedding_rows import rows_against_base
    from nlivis.store.weights import save_tensors

    module = load_script("compact_checkpoints")
    base_rows = torch.arange(24, dtype=torch.float16).reshape(6, 4)
    rows = torch.cat([base_rows[[3, 1, 0]], torch.full((1, 4), 7.5, dtype=torch.float16)])
    base, path = tmp_path / "base.safetensors", tmp_path / "full.safetensors"
    save_tensors({EMBEDDING_TENSOR: base_rows}, base)
    extension = rows_against_base(rows, base_rows)
    target = tmp_path / "full-on-base.safetensors"
    save_tensors(extension, target, metadata={"written": "by an earlier compaction"})
    before = target.read_bytes()
    save_tensors({EMBEDDING_TENSOR: rows}, path)
    module.restore_as_extension(path, base, extension, [])
    assert target.read_bytes() == before and not path.exists()

    save_tensors({EMBEDDING_TENSOR: rows}, path)
    other = rows_against_base(rows + 1, base_rows)
    with pytest.raises(SystemExit, match="other rows"):
        module.restore_as_extension(path, base, other, [])
    assert target.read_bytes() == before and path.exists()
