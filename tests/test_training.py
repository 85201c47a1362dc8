"""Training: schedules' known values, config validation, metrics, an end-to-end run, stop and resume."""
from __future__ import annotations

import gzip
import json
from importlib import metadata
import math
import threading

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

from nlivis.data.protocols import SplitRef
from nlivis.features.dataset import load_split_analysed_reported
from nlivis.training import schedules
from nlivis.store.checkpoints import STATE_FOLDER
from nlivis.inference import load_checkpoint
from nlivis.training.config import FeatureOptions, TrainingSettings, all_configs, apply_size
from nlivis.store.metrics_log import MetricsLog, read_metrics_log
from nlivis.analysis.metrics import classification_report
from nlivis.training.request import TrainRequest, split_feature_table
from nlivis.training.stopping import TrainingStopped
from nlivis.training.trainer import train
from tests.fixtures.training.helpers import FIXTURE_DIR, StopAfter, tiny_config, train_tiny


# ------------------------------------------------------------------------------------------ schedules

def test_keep_rate_decays_by_0977_every_10k_steps():
    assert schedules.dropout_keep_rate(0, 1.0, 0.977, 10_000) == 1.0
    assert schedules.dropout_keep_rate(10_000, 1.0, 0.977, 10_000) == pytest.approx(0.977)
    assert schedules.dropout_keep_rate(20_000, 1.0, 0.977, 10_000) == pytest.approx(0.977 ** 2)
    # smooth (staircase=False) between the marks
    assert 0.977 < schedules.dropout_keep_rate(5_000, 1.0, 0.977, 10_000) < 1.0


def test_sigmoid_ramp_is_half_at_midpoint_and_full_after_ramp():
    full = 9e-5
    assert schedules.sigmoid_ramp_weight(50_000, full, 50_000, 50_000) == pytest.approx(full / 2)
    assert schedules.sigmoid_ramp_weight(100_000, full, 50_000, 50_000) == pytest.approx(full / (1 + math.exp(-8)))
    assert schedules.sigmoid_ramp_weight(0, full, 50_000, 50_000) == pytest.approx(full / (1 + math.exp(8)))


def test_set_dropout_rate_reaches_every_dropout_module():
    model = nn.Sequential(nn.Dropout(0.1), nn.Sequential(nn.Linear(2, 2), nn.Dropout2d(0.3)))
    schedules.set_dropout_rate(model, 0.25)
    assert [m.p for m in model.modules() if isinstance(m, nn.modules.dropout._DropoutNd)] == [0.25, 0.25]


def test_l2_penalty_counts_weight_matrices_only():
    model = nn.Sequential(nn.Embedding(4, 2), nn.Linear(2, 3))
    with torch.no_grad():
        model[0].weight.fill_(5.0)
        model[1].weight.fill_(2.0)
        model[1].bias.fill_(7.0)
    # 6 entries of 2.0: sum of squares 24, halved as tf.nn.l2_loss does
    assert schedules.l2_penalty(model).item() == pytest.approx(12.0)


def test_learning_rate_decays_per_epoch():
    assert schedules.learning_rate_for_epoch(0.5, 0.9, 2) == pytest.approx(0.405)
    assert schedules.learning_rate_for_epoch(0.5, 1.0, 7) == 0.5


# --------------------------------------------------------------------------------------------- config

def test_training_settings_reject_unknown_keys_and_wrong_types():
    with pytest.raises(ValueError, match="unknown key.*'lr_rate'"):
        TrainingSettings.from_dict({"lr_rate": 0.1})
    with pytest.raises(ValueError, match="batch_size"):
        TrainingSettings.from_dict({"batch_size": "big"})
    with pytest.raises(ValueError, match="optimizer 'adamw' unknown"):
        TrainingSettings.from_dict({"optimizer": "adamw"})
    assert TrainingSettings.from_dict({"lr": 1, "epochs": 3}).lr == 1.0


def test_feature_table_splits_into_options_and_featurizer_settings():
    options, featurizer = split_feature_table({"max_premise_len": 20, "embeddings": "minilm", "pad_to_cutoff": True})
    assert options == FeatureOptions(max_premise_len=20, embeddings="minilm")
    assert featurizer["pad_to_cutoff"] is True and featurizer["max_premise_len"] == 20
    with pytest.raises(ValueError, match="unknown key.*'max_len'"):
        split_feature_table({"max_len": 3})


def test_shipped_size_deep_merges_the_shipped_table():
    config = {"model": {"name": "m", "hidden": 300, "layers": 4}, "training": {"epochs": 10},
              "shipped": {"model": {"hidden": 100}, "training": {"epochs": 2}}}
    shipped = apply_size(config, "shipped")
    assert shipped["model"] == {"name": "m", "hidden": 100, "layers": 4}
    assert shipped["training"] == {"epochs": 2} and "shipped" not in shipped and shipped["size"] == "shipped"
    assert apply_size(config, "paper")["model"]["hidden"] == 300


@pytest.mark.parametrize("size", ["paper", "shipped"])
def test_every_project_config_validates(size):
    for name, config in all_configs().items():
        if size == "shipped" and "shipped" not in config:
            continue
        resolved = apply_size(config, size)
        TrainingSettings.from_dict(resolved.get("training", {}))
        split_feature_table(resolved.get("features", {}))


# -------------------------------------------------------------------------------------------- metrics

def test_classification_report_known_values():
    report = classification_report([0, 0, 1, 1, 2], [0, 1, 1, 1, 0], ("a", "b", "c"))
    assert report.accuracy == pytest.approx(3 / 5)
    a, b, c = report.per_label
    assert (a.precision, a.recall) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (b.precision, b.recall, b.f1) == (pytest.approx(2 / 3), 1.0, pytest.approx(0.8))
    assert (c.precision, c.recall, c.f1, c.support) == (0.0, 0.0, 0.0, 1)
    assert report.confusion == ((1, 1, 0), (0, 2, 0), (1, 0, 0))


def test_metrics_log_resume_drops_lines_after_the_state(tmp_path):
    log = MetricsLog(tmp_path / "metrics.jsonl")
    for step in (2, 4, 6):
        log.write(step=step, loss=1.0)
    MetricsLog(tmp_path / "metrics.jsonl", resume_from_step=4)
    assert [r["step"] for r in read_metrics_log(tmp_path / "metrics.jsonl")] == [2, 4]


# ----------------------------------------------------------------------------------------- end to end

@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("analysis-cache")


def test_train_end_to_end_writes_a_loadable_checkpoint(tmp_path, cache_dir):
    out = tmp_path / "ckpts" / "tiny"
    info = train_tiny(out, cache_dir)
    assert info.path == out and info.model == "gcnn" and info.protocol == "snli" and info.select_split == "snli_dev"
    assert 0.0 <= info.dev_accuracy <= 1.0
    names = {p.name for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "vocab.json", "chars.json", "metrics.json", "metrics.jsonl",
            "COMPLETE", "predictions_snli_dev.jsonl.gz", "predictions_snli_test.jsonl.gz"} <= names
    assert STATE_FOLDER not in names
    config = json.loads((out / "config.json").read_text())
    assert config["steps"] == 10 and config["pairs_seen"] == 40 * 2 and config["seed"] == 1
    assert config["embeddings"]["shared"] and (out / config["embeddings"]["file"]).is_file()
    assert config["weights"]["dtype"] in ("float16", "float32")
    assert config["weights"]["dtype"] == config["fp16_check"]["stored_as"]
    assert config["versions"]["spacy"] == metadata.version("spacy") and config["versions"]["pipeline"].startswith("en_core_web_sm")
    # the shared frozen rows are stored as built: fp16 rounding applies to model.safetensors only
    rows = load_file(str(out / config["embeddings"]["file"]))["word_vectors"]
    assert rows.dtype == torch.float32 and not torch.equal(rows, rows.half().float())
    # predictions never carry sentences
    first = json.loads(gzip.decompress((out / "predictions_snli_test.jsonl.gz").read_bytes()).splitlines()[0])
    assert set(first) == {"id", "gold", "predicted", "probs"} and len(first["probs"]) == 3
    # the live log has training lines and dev evaluations
    records = read_metrics_log(out / "metrics.jsonl")
    assert any("train_acc" in r and "pairs_per_s" in r for r in records)
    assert [r["step"] for r in records if "dev_acc" in r] == [4, 5, 8, 10]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["best_dev_accuracy_in_training"] == max(r["dev_acc"] for r in metrics["curve"])
    # the recorded accuracy is that of the stored weights: the training one, or the fp16-rounded one
    # within the fp16 rule's tolerance
    check = config["fp16_check"]
    expected = check["fp16_accuracy"] if check["stored_as"] == "float16" else check["fp32_accuracy"]
    assert metrics["best_dev_accuracy"] == pytest.approx(expected, abs=1e-6)
    assert check["fp32_accuracy"] == pytest.approx(metrics["best_dev_accuracy_in_training"], abs=1e-6)

    loaded = load_checkpoint(out)
    assert loaded.labels == ("entailment", "neutral", "contradiction")
    assert not loaded.model.training


def test_model_selection_uses_the_dev_split_only(tmp_path, cache_dir):
    out = tmp_path / "ckpts" / "tiny"
    train_tiny(out, cache_dir, max_steps=6)
    metrics = json.loads((out / "metrics.json").read_text())
    best = max(metrics["curve"], key=lambda r: r["dev_acc"])
    assert metrics["best_step"] == best["step"]
    dev_rows = [json.loads(line) for line in gzip.decompress((out / "predictions_snli_dev.jsonl.gz").read_bytes()).splitlines()]
    accuracy = sum(r["gold"] == r["predicted"] for r in dev_rows) / len(dev_rows)
    assert accuracy == pytest.approx(metrics["best_dev_accuracy"])


@pytest.mark.parametrize("stop_after_steps", [3, 7])
def test_resumed_run_reaches_the_same_weights(tmp_path, cache_dir, stop_after_steps):
    straight = tmp_path / "a" / "run"
    train_tiny(straight, cache_dir, max_steps=9)
    resumed = tmp_path / "b" / "run"
    with pytest.raises(TrainingStopped, match=f"step {stop_after_steps}"):
        train_tiny(resumed, cache_dir, max_steps=9, stop_event=StopAfter(stop_after_steps))
    assert (resumed / STATE_FOLDER / "state.json").is_file() and not (resumed / "COMPLETE").exists()
    with pytest.raises(ValueError, match="--resume"):
        train_tiny(resumed, cache_dir, max_steps=9)
    train_tiny(resumed, cache_dir, max_steps=9, resume=True)
    a, b = load_file(str(straight / "model.safetensors")), load_file(str(resumed / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    curve = lambda path: [(r["step"], r["dev_acc"]) for r in json.loads((path / "metrics.json").read_text())["curve"]]
    assert curve(straight) == curve(resumed)
    steps = [r["step"] for r in read_metrics_log(resumed / "metrics.jsonl") if "train_acc" in r]
    assert steps == sorted(set(steps))


def test_stop_file_saves_state_and_is_removed(tmp_path, cache_dir):
    out = tmp_path / "ckpts" / "tiny"
    out.mkdir(parents=True)
    (out / "STOP").write_text("")
    with pytest.raises(TrainingStopped):
        train_tiny(out, cache_dir)
    assert (out / STATE_FOLDER / "state.json").is_file() and not (out / "STOP").exists()


def test_resume_with_another_seed_config_or_dataset_is_refused(tmp_path, cache_dir):
    from nlivis.training.config import deep_merge

    out = tmp_path / "ckpts" / "tiny"
    with pytest.raises(TrainingStopped):
        train_tiny(out, cache_dir, max_steps=6, stop_event=StopAfter(3))
    with pytest.raises(ValueError, match=r"--resume continues the run saved in .*: seed 2 \(the saved run: 1\)"):
        train_tiny(out, cache_dir, max_steps=6, resume=True, seed=2)
    changed = deep_merge(tiny_config(), {"training": {"lr": 0.5}, "model": {"hidden_size": 9}})
    with pytest.raises(ValueError, match=r"\[model\] hidden_size 9 \(the saved run: 8\); \[training\] lr 0.5"):
        train(TrainRequest(changed, "snli", FIXTURE_DIR, out, device="cpu", cache_dir=cache_dir, progress=False,
                           resume=True))
    with pytest.raises(ValueError, match="dataset 'snli-small' \\(the saved run: 'snli'\\)"):
        train(TrainRequest(tiny_config(), "snli-small", FIXTURE_DIR, out, device="cpu", cache_dir=cache_dir,
                           progress=False, resume=True))
    train_tiny(out, cache_dir, max_steps=8, resume=True)  # the budget may change: it trains longer
    assert json.loads((out / "config.json").read_text())["steps"] == 8


def test_non_finite_word_vectors_are_refused_before_the_first_step(tmp_path, cache_dir, monkeypatch):
    from nlivis.training import prepared

    real_build = prepared.build_embeddings

    def with_a_nan(*args, **kwargs):
        vectors, stats = real_build(*args, **kwargs)
        vectors[5, 2] = float("nan")
        return vectors, stats

    monkeypatch.setattr(prepared, "build_embeddings", with_a_nan)
    out = tmp_path / "ckpts" / "tiny"
    with pytest.raises(ValueError, match=r"word vectors \(random\) hold NaN or infinite values in 1 of .* nothing was"):
        train_tiny(out, cache_dir)
    assert not out.exists()


def test_progress_in_a_log_is_plain_lines_not_terminal_frames(tmp_path, cache_dir, capsys):
    train_tiny(tmp_path / "run", cache_dir, progress=True, epochs=8)  # capsys: stderr is not a terminal
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = [line for line in err.splitlines() if line.startswith("step ")]
    assert len(lines) == 20 and lines[-1].startswith("step 40/40 (100%) · epoch 8.00 loss")
    assert "dev " in lines[-1] and "elapsed" in lines[-1]


def test_plain_progress_lines_every_5_percent_also_after_a_resume():
    import io

    from nlivis.training.progress import Progress

    stream = io.StringIO()
    progress = Progress(total=100, initial=37, enabled=True, stream=stream)  # resumed at step 37
    progress.describe("loss 0.500")
    for _ in range(63):
        progress.update()
    lines = stream.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == [f"{step}/100" for step in range(40, 101, 5)]
    assert lines[0].startswith("step 40/100 (40%) · loss 0.500 · ") and "left" in lines[0] and "left" not in lines[-1]
    quiet = io.StringIO()
    Progress(total=10, initial=0, enabled=False, stream=quiet).update(10)
    assert quiet.getvalue() == ""


def test_threading_event_stops_training(tmp_path, cache_dir):
    event = threading.Event()
    event.set()
    with pytest.raises(TrainingStopped, match="step 0"):
        train_tiny(tmp_path / "ckpts" / "tiny", cache_dir, stop_event=event)


def test_shipped_size_and_overrides_reach_the_checkpoint(tmp_path, cache_dir):
    out = tmp_path / "ckpts" / "tiny"
    train_tiny(out, cache_dir, size="shipped")
    config = json.loads((out / "config.json").read_text())
    assert config["size"] == "shipped" and config["training"]["epochs"] == 1.0 and config["steps"] == 5


def test_unknown_word_init_is_a_config_option_recorded_with_the_run(tmp_path, cache_dir):
    from nlivis.training.config import deep_merge

    config = deep_merge(tiny_config(), {"features": {"unknown_word_init": "uniform", "unknown_word_scale": 0.02},
                                        "model": {"freeze_word_embeddings": True}})
    out = tmp_path / "run"
    train(TrainRequest(config, "snli", FIXTURE_DIR, out, device="cpu", cache_dir=cache_dir, progress=False, max_steps=1))
    record = json.loads((out / "config.json").read_text())
    assert record["embeddings"]["stats"]["oov_init"] == "uniform" and record["embeddings"]["stats"]["oov_scale"] == 0.02
    assert record["features"]["options"]["unknown_word_init"] == "uniform"
    vectors = load_checkpoint(out).model.word_embedding.weight  # "random" source: every row is an unknown-word row
    assert 0.0 < vectors.abs().max().item() <= 0.02 * (1 + 2 ** -10)  # stored in fp16
    with pytest.raises(ValueError, match="unknown_word_init 'zeros' unknown"):
        FeatureOptions.from_dict({"unknown_word_init": "zeros"})


def _mnli_root(tmp_path, with_snli: bool):
    """A full-data `mnli` root made of the fixture pairs: 40 MultiNLI training pairs, dev matched /
    mismatched, and (with_snli) SNLI's 40 training pairs (ids renamed) in snli_1.0/."""
    import shutil

    root = tmp_path / "mnli_root"
    root.mkdir()
    shutil.copy(FIXTURE_DIR / "snli_1.0_train.jsonl", root / "multinli_1.0_train.jsonl")
    for split in ("dev_matched", "dev_mismatched"):
        shutil.copy(FIXTURE_DIR / "snli_1.0_dev.jsonl", root / f"multinli_1.0_{split}.jsonl")
    if with_snli:
        (root / "snli_1.0").mkdir()
        lines = (FIXTURE_DIR / "snli_1.0_train.jsonl").read_text().replace('"train-', '"snli-train-')
        (root / "snli_1.0" / "snli_1.0_train.jsonl").write_text(lines)
    return root


def test_snli_mix_in_adds_a_new_sample_each_epoch_under_mnli(tmp_path, cache_dir, monkeypatch):
    from nlivis.training.config import deep_merge

    from nlivis.features.featurize import Featurizer

    encoded: list[list[str]] = []

    real_encode = Featurizer.encode
    monkeypatch.setattr(Featurizer, "encode", lambda self, items: (encoded.append([i.pair.id for i in items]),
                                                                   real_encode(self, items))[1])
    config = deep_merge(tiny_config(), {"training": {"snli_fraction_with_mnli": 0.25, "epochs": 2,
                                                     "eval_every_steps": 0}})
    out = tmp_path / "run"
    train(TrainRequest(config, "mnli", _mnli_root(tmp_path, with_snli=True), out, device="cpu", cache_dir=cache_dir,
                       progress=False))
    record = json.loads((out / "config.json").read_text())
    assert record["dataset"]["mix_in"] == {"split": "snli_train", "fraction": 0.25, "pairs_per_epoch": 10, "of": 40}
    assert "25% of snli_train" in record["dataset"]["description"]
    assert record["pairs_seen"] == 2 * (40 + 10)
    trained = [pair for batch in encoded for pair in batch if pair.startswith(("train-", "snli-"))]  # not dev
    assert len(trained) == 100
    epochs = [trained[:50], trained[50:]]
    snli = [{p for p in epoch if p.startswith("snli-")} for epoch in epochs]
    assert all(sum(p.startswith("train-") for p in e) == 40 for e in epochs)
    assert [len(s) for s in snli] == [10, 10] and snli[0] != snli[1]  # a new sample each epoch


def test_snli_mix_in_without_snli_names_where_it_looked(tmp_path, cache_dir):
    from nlivis.training.config import deep_merge

    config = deep_merge(tiny_config(), {"training": {"snli_fraction_with_mnli": 0.15}})
    with pytest.raises(FileNotFoundError, match="snli_1.0/snli_1.0_train.jsonl.*set the fraction to 0"):
        train(TrainRequest(config, "mnli", _mnli_root(tmp_path, with_snli=False), tmp_path / "run", device="cpu",
                           cache_dir=cache_dir, progress=False))


def test_evaluation_batches_respect_the_models_measured_cap(tmp_path, cache_dir, monkeypatch):
    from nlivis.data.protocols import SplitRef
    from nlivis.features.dataset import load_split_analysed_reported
    from nlivis.inference import predict_probabilities

    out = tmp_path / "run"
    train_tiny(out, cache_dir, max_steps=1)
    loaded = load_checkpoint(out)
    items = load_split_analysed_reported(SplitRef("snli", "dev"), FIXTURE_DIR, cache_dir, progress=False)[0]
    uncapped = predict_probabilities(loaded.model, loaded.featurizer, items, 128, torch.device("cpu"))
    sizes: list[int] = []
    real_encode = type(loaded.featurizer).encode
    monkeypatch.setattr(type(loaded.featurizer), "encode", lambda self, chunk: (sizes.append(len(chunk)),
                                                                                real_encode(self, chunk))[1])
    monkeypatch.setattr(type(loaded.model), "max_inference_batch", 5)
    capped = predict_probabilities(loaded.model, loaded.featurizer, items, 128, torch.device("cpu"))
    assert max(sizes) <= 5 and sum(sizes) == len(items) == 12
    torch.testing.assert_close(capped, uncapped)


def test_unknown_protocol_is_a_clear_error(tmp_path, cache_dir):

    with pytest.raises(ValueError, match="unknown dataset or protocol 'snly'"):
        train(TrainRequest(tiny_config(), "snly", FIXTURE_DIR, tmp_path / "x", device="cpu", cache_dir=cache_dir,
                           progress=False))


def _train_with(tmp_path, cache_dir, training: dict, **overrides):
    from nlivis.training.config import deep_merge

    config = deep_merge(tiny_config(), {"training": training})
    options = dict(device="cpu", cache_dir=cache_dir, progress=False)
    options.update(overrides)
    return train(TrainRequest(config, "snli", FIXTURE_DIR, tmp_path / "ckpts" / "run", **options))


def test_diin_schedules_drive_dropout_and_l2(tmp_path, cache_dir, monkeypatch):
    rates, l2_weights = [], []
    original_rate, original_ramp = schedules.set_dropout_rate, schedules.sigmoid_ramp_weight
    monkeypatch.setattr(schedules, "set_dropout_rate", lambda model, rate: (rates.append(rate), original_rate(model, rate)))
    monkeypatch.setattr(schedules, "sigmoid_ramp_weight",
                        lambda *a: (l2_weights.append(original_ramp(*a)), l2_weights[-1])[1])
    _train_with(tmp_path, cache_dir, {"dropout_keep_decay_rate": 0.5, "dropout_keep_decay_steps": 4,
                                      "l2_schedule": "sigmoid_ramp", "l2_full_weight": 1e-3,
                                      "l2_ramp_midpoint_step": 5, "l2_ramp_steps": 5}, max_steps=6)
    # tiny.toml's dropout 0.2 → keep 0.8 at step 0, halved every 4 steps, smoothly
    assert rates == pytest.approx([1 - 0.8 * 0.5 ** (step / 4) for step in range(6)])
    assert l2_weights[5] == pytest.approx(0.5e-3)


def test_sgd_fallback_counts_steps_without_improvement(tmp_path, cache_dir):
    _train_with(tmp_path, cache_dir, {"lr": 1e-12, "sgd_fallback_after_steps": 4, "sgd_fallback_lr": 0.123,
                                      "eval_every_steps": 2, "epochs": 3, "log_every_steps": 1})
    records = read_metrics_log(tmp_path / "ckpts" / "run" / "metrics.jsonl")
    rates = {r["step"]: r["lr"] for r in records if "train_acc" in r}
    # the best dev score is step 2's (lr 1e-12 changes nothing); the evaluation at step 6 is 4 steps past
    # it → SGD from step 7 on, in the middle of the second epoch (5 batches per epoch)
    assert rates[6] == pytest.approx(1e-12) and rates[7] == rates[15] == pytest.approx(0.123)


def test_the_vocabulary_reads_an_evaluation_splits_tokens_without_waiting_for_its_analysis(tmp_path):
    """Training starts once its own pairs are analysed: a select or report split not analysed yet gives the
    vocabulary spaCy's tokenizer's tokens, the very tokens its full analysis has (which waits for the first
    evaluation); once analysed, its analyses are used."""
    from nlivis.data.protocols import get_protocol
    from nlivis.features.dataset import load_split_analysed
    from nlivis.training.prepared import eval_split_tokens

    ref, cache = get_protocol("snli").select, tmp_path / "cache"
    asked = []
    quick = eval_split_tokens(ref, FIXTURE_DIR, cache, {}, lambda split: asked.append(split) or [])
    assert not asked, "a split not analysed yet is only tokenised"
    items = load_split_analysed(ref, FIXTURE_DIR, cache)[0]
    assert quick == [tuple(sentence.tokens) for item in items for sentence in (item.premise, item.hypothesis)]
    assert eval_split_tokens(ref, FIXTURE_DIR, cache, {}, lambda split: asked.append(split) or items) == quick
    assert asked == [ref], "an analysed split is read, not tokenised again"


def test_a_run_shorter_than_an_epoch_analyses_only_its_pairs_and_trains_the_same_weights(tmp_path, cache_dir):
    """On a cold feature cache a run that `max_steps` ends within its first epoch has spaCy analyse only the
    training pairs its steps use (the rest tokenised): the Train page's short runs waited for the whole training
    split first. It trains exactly the weights of the same run over the whole split's analyses."""
    full, planned, cold = tmp_path / "full" / "run", tmp_path / "planned" / "run", tmp_path / "cold-cache"
    load_split_analysed_reported(SplitRef("snli", "train"), FIXTURE_DIR, cache_dir, progress=False)
    train_tiny(full, cache_dir, max_steps=2)
    train_tiny(planned, cold, max_steps=2)
    assert not list(cold.glob("analysis-snli_train-*")), "the training split was not analysed whole"
    assert len(list(cold.glob("analysis-pairs-*"))) == 1, "only the pairs of its two batches"
    a, b = load_file(str(full / "model.safetensors")), load_file(str(planned / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)
    assert (full / "vocab.json").read_bytes() == (planned / "vocab.json").read_bytes()
