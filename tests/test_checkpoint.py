"""Checkpoint folders: atomic saves, every damaged part caught with a message naming folder and problem."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from nlivis.inference import load_checkpoint
from nlivis.store import weights
from nlivis.store.checkpoints import CheckpointError, find_checkpoints
from nlivis.store.files import sha256_file
from nlivis.store.training_state import (
    flatten_optimizer_state,
    unflatten_optimizer_state,
)
from tests.fixtures.training.helpers import copy_root, train_tiny


@pytest.fixture(scope="module")
def trained_root(tmp_path_factory) -> Path:
    """A checkpoint root holding one trained tiny model ("tiny") and its shared embedding file."""
    root = tmp_path_factory.mktemp("root")
    train_tiny(root / "tiny", root / "cache", max_steps=4)
    return root


@pytest.fixture
def damaged(trained_root, tmp_path) -> Path:
    """A private copy of the trained checkpoint that a test may damage."""
    return copy_root(trained_root, tmp_path / "root") / "tiny"


def assert_error(folder: Path, *fragments: str) -> None:
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(folder)
    message = str(caught.value)
    assert str(folder) in message
    for fragment in fragments:
        assert fragment in message, message


def test_good_checkpoint_loads_and_predicts_like_its_predictions_file(damaged):
    from nlivis.workflows.evaluate import evaluate_checkpoint
    from nlivis.data.protocols import SplitRef
    from nlivis.features.dataset import load_split_analysed
    from nlivis.store.predictions import read_predictions
    from tests.fixtures.training.helpers import FIXTURE_DIR

    loaded = load_checkpoint(damaged)
    items, _ = load_split_analysed(SplitRef("snli", "dev"), FIXTURE_DIR, damaged.parent / "cache")
    result = evaluate_checkpoint(loaded, items)
    saved = read_predictions(damaged / "predictions_snli_dev.jsonl.gz")
    assert [r["predicted"] for r in result.predictions] == [r.predicted for r in saved]
    assert result.report.accuracy == pytest.approx(loaded.metrics["best_dev_accuracy"])


@pytest.mark.parametrize("name", ["model.safetensors", "vocab.json", "chars.json", "config.json", "metrics.json", "COMPLETE"])
def test_missing_part(damaged, name):
    (damaged / name).unlink()
    assert_error(damaged, name if name != "COMPLETE" else "no COMPLETE marker")


def test_truncated_safetensors(damaged):
    path = damaged / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-100])
    assert_error(damaged, "model.safetensors", "truncated")


def test_corrupt_safetensors_same_size(damaged):
    path = damaged / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[10:20] = b"\xff" * 10
    path.write_bytes(bytes(data))
    assert_error(damaged, "model.safetensors", "sha256")


def test_unreadable_safetensors_listed_in_manifest(damaged):
    path = damaged / "model.safetensors"
    path.write_bytes(b"not a safetensors file")
    manifest = json.loads((damaged / "COMPLETE").read_text())
    manifest["files"]["model.safetensors"] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
    (damaged / "COMPLETE").write_text(json.dumps(manifest))
    assert_error(damaged, "model.safetensors cannot be read as safetensors")


def rewrite_weights(folder: Path, change) -> str:
    """Apply `change` to one floating tensor of model.safetensors and re-record the file in the manifest (the
    damage a diverged run saves, which no hash catches); the tensor's name."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    name = max((key for key, value in tensors.items() if value.is_floating_point()), key=lambda k: tensors[k].numel())
    tensors[name] = change(tensors[name].clone())
    save_file(tensors, str(path))
    manifest = json.loads((folder / "COMPLETE").read_text())
    manifest["files"]["model.safetensors"] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
    (folder / "COMPLETE").write_text(json.dumps(manifest))
    return name


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_weights_holding_nan_or_infinity_are_named(damaged, value):
    def spoil(tensor):
        tensor.view(-1)[tensor.numel() // 2] = value
        return tensor
    name = rewrite_weights(damaged, spoil)
    assert_error(damaged, "model.safetensors holds NaN or infinite values", name)


def test_finite_weights_whose_sum_overflows_load(damaged):
    """Each weight finite, their float32 sum not: the one-pass check must look again before calling them corrupt."""
    def huge(tensor):
        tensor = tensor.float()  # a float32 tensor (the file may keep fp16, whose sum cannot overflow float32)
        tensor.view(-1)[:4] = torch.finfo(torch.float32).max
        return tensor
    rewrite_weights(damaged, huge)
    assert load_checkpoint(damaged).path == damaged


def test_corrupt_json(damaged):
    (damaged / "config.json").write_text('{"model": ')
    assert_error(damaged, "config.json is not valid JSON")


def test_config_shape_mismatch(damaged):
    config = json.loads((damaged / "config.json").read_text())
    config["model"]["hidden_size"] = 10
    (damaged / "config.json").write_text(json.dumps(config))
    assert_error(damaged, "does not match model.safetensors", "shape mismatch")


def test_config_missing_and_unexpected_keys(damaged):
    config = json.loads((damaged / "config.json").read_text())
    config["model"]["context_layers"] = 2
    (damaged / "config.json").write_text(json.dumps(config))
    assert_error(damaged, "does not match model.safetensors", "missing keys")
    config["model"]["context_layers"] = 1
    config["model"]["use_pos"] = True
    (damaged / "config.json").write_text(json.dumps(config))
    assert_error(damaged, "does not match model.safetensors")


def test_config_naming_an_unknown_model(damaged):
    config = json.loads((damaged / "config.json").read_text())
    config["model"]["name"] = "no_such_model"
    (damaged / "config.json").write_text(json.dumps(config))
    assert_error(damaged, "cannot rebuild the model", "no_such_model")


def test_shared_embedding_sha_mismatch(damaged):
    config = json.loads((damaged / "config.json").read_text())
    shared = damaged / config["embeddings"]["file"]
    data = bytearray(shared.read_bytes())
    data[-4:] = b"\x00\x00\x80\x7f"
    shared.write_bytes(bytes(data))
    assert_error(damaged, "shared embedding file", "sha256")


def test_shared_embedding_missing(damaged):
    config = json.loads((damaged / "config.json").read_text())
    (damaged / config["embeddings"]["file"]).unlink()
    assert_error(damaged, "shared embedding file", "missing")


def test_find_checkpoints_skips_and_reports_broken_folders(trained_root, tmp_path):
    root = copy_root(trained_root, tmp_path / "root")
    shutil.copytree(root / "tiny", root / "broken")
    (root / "broken" / "metrics.json").write_text("{")
    (root / "empty").mkdir()
    broken: list[CheckpointError] = []
    found = find_checkpoints(root, broken)
    assert [info.name for info in found] == ["tiny"]
    assert found[0].embedding_source == "random" and found[0].parameters > 0 and found[0].disk_bytes > 0
    assert sorted(Path(e.folder).name for e in broken) == ["broken", "empty"]
    assert find_checkpoints(tmp_path / "nowhere") == []


def test_embedding_file_is_shared_between_checkpoints(trained_root, tmp_path):
    root = copy_root(trained_root, tmp_path / "root")
    train_tiny(root / "second", root / "cache", max_steps=2, seed=1)
    assert len(list((root / "embeddings").iterdir())) == 1
    for name in ("tiny", "second"):
        load_checkpoint(root / name)


def test_crash_mid_save_leaves_no_valid_looking_checkpoint_and_resume_finishes(tmp_path, monkeypatch):
    out = tmp_path / "root" / "run"

    def crash(*args, **kwargs):
        raise Killed("simulated kill while writing")

    with monkeypatch.context() as patch:
        patch.setattr(weights, "write_predictions", crash)
        with pytest.raises(Killed, match="simulated kill"):
            train_tiny(out, tmp_path / "cache", max_steps=4)
    assert not (out / "COMPLETE").exists()
    assert find_checkpoints(out.parent) == []
    partial = [p for p in out.parent.iterdir() if p.name.startswith(".run.partial")]
    assert partial and (partial[0] / "model.safetensors").is_file()
    with pytest.raises(CheckpointError, match="no COMPLETE marker"):
        load_checkpoint(partial[0])
    with pytest.raises(CheckpointError, match="resume it with --resume"):
        load_checkpoint(out)
    train_tiny(out, tmp_path / "cache", max_steps=4, resume=True)
    load_checkpoint(out)
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".run.")], "the dead run's partial is removed"


class Killed(BaseException):
    """Stands for the process being killed: nothing in nlivis catches it, as nothing can catch SIGKILL."""


def test_optimizer_state_round_trip():
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1, betas=(0.8, 0.9))
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    tensors, meta = flatten_optimizer_state(optimizer.state_dict())
    meta = json.loads(json.dumps(meta))
    fresh = torch.optim.Adam(model.parameters(), lr=0.5)
    fresh.load_state_dict(unflatten_optimizer_state(tensors, meta))
    restored = fresh.state_dict()
    assert restored["param_groups"][0]["betas"] == (0.8, 0.9) and restored["param_groups"][0]["lr"] == 0.1
    for key, value in optimizer.state_dict()["state"][0].items():
        assert torch.equal(restored["state"][0][key], value)


def test_shared_embeddings_restored_in_fp16_load_through_a_rewritten_config(damaged):
    from safetensors.torch import load_file

    from nlivis.store.checkpoints import EMBEDDING_TENSOR
    from nlivis.store.files import sha256_file
    from nlivis.store.weights import rewrite_checkpoint, save_tensors

    before = load_checkpoint(damaged).model.word_embedding.weight.detach().clone()
    config = json.loads((damaged / "config.json").read_text())
    source = (damaged / config["embeddings"]["file"]).resolve()
    target = source.with_name(source.stem + "-fp16.safetensors")
    save_tensors({EMBEDDING_TENSOR: load_file(str(source))[EMBEDDING_TENSOR].half()}, target)
    config["embeddings"].update({"file": f"../embeddings/{target.name}", "sha256": sha256_file(target)})
    rewrite_checkpoint(damaged, config=config)
    after = load_checkpoint(damaged).model.word_embedding.weight
    assert after.dtype == before.dtype
    torch.testing.assert_close(after, before, atol=1e-3, rtol=1e-3)
    manifest = json.loads((damaged / "COMPLETE").read_text())
    assert manifest["files"]["config.json"]["sha256"] == sha256_file(damaged / "config.json")


def extended_from_a_base(folder: Path) -> tuple[Path, Path]:
    """Re-store the checkpoint's shared rows as a base (the rows with the last two changed) plus an extension
    holding what the base lacks, as scripts/compact_checkpoints.py does; returns (extension, base)."""
    from safetensors.torch import load_file

    from nlivis.store.checkpoints import EMBEDDING_TENSOR
    from nlivis.store.embedding_rows import rows_against_base
    from nlivis.store.weights import save_tensors

    config = json.loads((folder / "config.json").read_text())
    rows = load_file(str((folder / config["embeddings"]["file"]).resolve()))[EMBEDDING_TENSOR]
    base_rows = rows.clone()
    base_rows[-2:] += 1.0
    base, extension = folder.parent / "embeddings" / "base.safetensors", folder.parent / "embeddings" / "ext.safetensors"
    save_tensors({EMBEDDING_TENSOR: base_rows}, base)
    save_tensors(rows_against_base(rows, base_rows), extension)
    config["embeddings"].update({"file": "../embeddings/ext.safetensors", "sha256": sha256_file(extension),
                                 "base": {"file": "../embeddings/base.safetensors", "sha256": sha256_file(base)}})
    weights.rewrite_checkpoint(folder, config=config)
    return extension, base


def test_shared_rows_stored_as_a_base_and_its_extension_load_bit_for_bit(damaged):
    before = load_checkpoint(damaged).model.word_embedding.weight.detach().clone()
    extension, _ = extended_from_a_base(damaged)
    assert extension.stat().st_size < before.numel() * before.element_size() / 4
    assert torch.equal(load_checkpoint(damaged).model.word_embedding.weight, before)


@pytest.mark.parametrize("which", [0, 1])
def test_a_missing_or_changed_base_or_extension_is_named(damaged, which):
    path = extended_from_a_base(damaged)[which]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    assert_error(damaged, "shared embedding file", str(path), "sha256")
    path.unlink()
    assert_error(damaged, "shared embedding file", path.name, "missing")


def run_script(name: str, *args: str) -> int:
    """scripts/NAME's main() with `args` as its command line."""
    import sys

    from tests.conftest import load_script

    module = load_script(name.removesuffix(".py"))
    argv, sys.argv = sys.argv, [name, *args]
    try:
        return module.main()
    finally:
        sys.argv = argv


def test_compaction_stores_a_file_of_mostly_shared_rows_as_an_extension_of_another(damaged):
    """scripts/compact_checkpoints.py step 4: a second checkpoint whose rows differ by one row from the first's
    ends up reading an extension of the first's file, bit for bit as before, and the full copy is gone."""
    from safetensors.torch import load_file

    from nlivis.store.checkpoints import EMBEDDING_TENSOR
    from nlivis.store.weights import save_tensors

    config = json.loads((damaged / "config.json").read_text())
    rows = load_file(str((damaged / config["embeddings"]["file"]).resolve()))[EMBEDDING_TENSOR]
    rows[-1] += 1.0  # the second seed's unknown word, drawn again
    second = damaged.parent / "tiny-seed2"
    shutil.copytree(damaged, second)
    full = damaged.parent / "embeddings" / "second.safetensors"
    save_tensors({EMBEDDING_TENSOR: rows}, full)
    config["embeddings"].update({"file": f"../embeddings/{full.name}", "sha256": sha256_file(full)})
    weights.rewrite_checkpoint(second, config=config)
    before = {folder: load_checkpoint(folder).model.word_embedding.weight.detach().clone() for folder in (damaged, second)}

    assert run_script("compact_checkpoints.py", "--checkpoints", str(damaged.parent),
                      "--data-dir", str(damaged.parent / "no-data")) == 0

    tables = {folder: json.loads((folder / "config.json").read_text())["embeddings"] for folder in (damaged, second)}
    extended = [folder for folder, table in tables.items() if "base" in table]
    assert len(extended) == 1 and len(list((damaged.parent / "embeddings").iterdir())) == 2
    for folder, rows_before in before.items():
        assert torch.equal(load_checkpoint(folder).model.word_embedding.weight, rows_before)


def test_shipping_a_trial_copies_it_and_its_shared_rows_under_a_new_name_and_never_replaces_one(damaged, tmp_path):
    shipped = tmp_path / "shipped"
    assert run_script("ship_trial.py", str(damaged), "tiny-shipped", "--checkpoints", str(shipped)) == 0
    loaded = load_checkpoint(shipped / "tiny-shipped")
    assert loaded.config["name"] == "tiny-shipped"
    assert torch.equal(loaded.model.word_embedding.weight, load_checkpoint(damaged).model.word_embedding.weight)
    with pytest.raises(SystemExit, match="exists"):
        run_script("ship_trial.py", str(damaged), "tiny-shipped", "--checkpoints", str(shipped))
    with pytest.raises(SystemExit, match="records no augmentation"):
        run_script("ship_trial.py", str(damaged), "tiny-other", "--checkpoints", str(shipped), "--control", "tiny")


def test_rewrite_replaces_weights_predictions_and_metrics_as_one_checkpoint(damaged):
    from safetensors.torch import load_file

    from nlivis.store.predictions import find_prediction_files, read_predictions
    from nlivis.store.weights import rewrite_checkpoint, word_embedding_key

    loaded = load_checkpoint(damaged)
    config = json.loads((damaged / "config.json").read_text())
    state = {k: v for k, v in loaded.model.state_dict().items() if k not in config["weights"]["excluded_keys"]}
    rows = [{"id": p.id, "gold": p.gold, "predicted": p.predicted, "probs": list(p.probs)}
            for p in read_predictions(find_prediction_files(damaged)["snli_dev"])]
    (damaged / "predictions_old_split.jsonl").write_text('{"id":"1","gold":null,"predicted":"neutral","probs":[0,1,0]}\n')
    config["weights"]["dtype"] = "float16"
    metrics = {**loaded.metrics, "note": "rewritten"}
    rewrite_checkpoint(damaged, config=config, metrics=metrics, weights=(state, torch.float16),
                       predictions={"snli_dev": rows}, remove=("predictions_old_split.jsonl",))
    again = load_checkpoint(damaged)  # the manifest was rebuilt: sizes and hashes check out
    assert again.metrics["note"] == "rewritten"
    assert {t.dtype for t in load_file(str(damaged / "model.safetensors")).values() if t.is_floating_point()} == {torch.float16}
    key = word_embedding_key(again.model)
    for name, tensor in again.model.state_dict().items():
        if name != key and tensor.is_floating_point():
            torch.testing.assert_close(tensor, loaded.model.state_dict()[name], atol=2e-3, rtol=1e-3)
    assert "old_split" not in find_prediction_files(damaged)
    assert not [p for p in damaged.parent.iterdir() if ".partial" in p.name]


def test_listing_checkpoints_does_not_import_torch(trained_root):
    """Home's scan reads only store.checkpoints: importing torch there cost 1.5–2 s of every cold start."""
    import subprocess
    import sys

    script = ("import sys; from nlivis.store.checkpoints import find_checkpoints; "
              f"found = find_checkpoints({str(trained_root)!r}); "
              "print(len(found), found[0].name, 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[1])
    assert result.stdout.split() == ["1", "tiny", "False"]


# ------------------------------------------------------------------- malformed folders never crash a listing

def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    data = change(data)
    path.write_text(json.dumps(data))


def _metrics_as_array(folder: Path) -> None:
    (folder / "metrics.json").write_text("[]")


def _null_embeddings(folder: Path) -> None:
    _edit_json(folder / "config.json", lambda c: {**c, "embeddings": None})


def _manifest_entry_without_bytes(folder: Path) -> None:
    def change(manifest):
        manifest["files"]["model.safetensors"].pop("bytes")
        return manifest
    _edit_json(folder / "COMPLETE", change)


def _symlink_loop(folder: Path) -> None:
    (folder / "loop").symlink_to(folder / "loop")


def _model_table_is_a_number(folder: Path) -> None:
    _edit_json(folder / "config.json", lambda c: {**c, "model": 5})


@pytest.mark.parametrize("damage, fragment", [
    (_metrics_as_array, "metrics.json must hold a JSON object, not array"),
    (_null_embeddings, "config.json 'embeddings' must be a JSON object, not null"),
    (_manifest_entry_without_bytes, "COMPLETE's entry for model.safetensors must give its \"bytes\""),
    (_symlink_loop, "loop cannot be resolved"),
    (_model_table_is_a_number, "config.json 'model' must be a JSON object, not number"),
], ids=["metrics-array", "embeddings-null", "manifest-no-bytes", "symlink-loop", "model-number"])
def test_a_malformed_folder_is_listed_as_broken_and_refused_in_one_line(damaged, damage, fragment, capsys):
    from nlivis.cli import main

    damage(damaged)
    broken: list[CheckpointError] = []
    assert find_checkpoints(damaged.parent, broken) == []
    assert len(broken) == 1 and fragment in str(broken[0]) and str(damaged) in str(broken[0])
    assert_error(damaged, fragment)
    code = main(["predict", str(damaged), "--premise", "A man sleeps .", "--hypothesis", "A man rests .", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and fragment in captured.err and len(captured.err.strip().splitlines()) == 1
    assert fragment in json.loads(captured.out)["error"], "--json says what went wrong on stdout too"
