"""Config files and model options: every wrong type, non-finite number or out-of-range value is a
`ConfigError` naming the file, the table and the key — never a traceback from deep inside training or
torch — and a model too large for this machine is refused before anything is allocated."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nlivis.data.options import ConfigError
from nlivis.models import registry
from nlivis.models.registry import build, model_config
from nlivis.training.config import CONFIG_DIR, TrainingSettings, apply_size, check_config, load_config

ROOT = Path(__file__).resolve().parents[1]


def write_config(folder: Path, text: str, name: str = "mine.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path, *fragments: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, message
    return message


GCNN = f'extends = "{CONFIG_DIR / "gcnn.toml"}"\n'


@pytest.mark.parametrize(("text", "fragments"), [
    (GCNN + "training = 5\n", ["[training] must be a table", "training = 5"]),
    (GCNN + "model = \"gcnn\"\n", ["[model] must be a table"]),
    ("extends = 5\n", ["extends must name the parent config file", "got 5"]),
    ('extends = "no_such_parent.toml"\n', ["extends = 'no_such_parent.toml'", "not found"]),
    (GCNN + "shipped = 5\n", ["[shipped] must be a table of overrides", "got 5"]),
    (GCNN + "[shipped]\ntraining = 5\n", ["[shipped.training] must be a table"]),
    (GCNN + "[trainig]\nlr = 0.1\n", ["unknown top-level key(s) ['trainig']"]),
    (GCNN + '[model]\nhidden_size = "big"\n', ["[model] hidden_size: expected an integer, got 'big'"]),
    (GCNN + "[model]\nhidden_size = 0\n", ["[model] hidden_size: must be a positive integer, got 0"]),
    (GCNN + "[model]\nkernel_width = 4\n", ["[model] kernel_width: must be odd"]),
    (GCNN + "[model]\ndropout = 1.0\n", ["[model] dropout: must lie in [0, 1)"]),
    (GCNN + "[model]\ndropout = nan\n", ["[model] dropout: must be a finite number"]),
    (GCNN + '[model]\nname = "gcnnn"\n', ["[model] name: unknown model 'gcnnn'"]),
    (GCNN + "[model]\nhidden_size = 1_000_000\n", ["[model]: the gcnn model these options describe is too large for this machine",
                                                    "parameters need", "GB of memory"]),
    (GCNN + "[model]\nhidden_size = 1_000_000_000\n", ["[model]: the gcnn model these options describe is too large to build"]),
    (GCNN + "[model]\ncontext_layers = 1_000_000_000\n", ["[model] context_layers: must be at most 64"]),
    (GCNN + "[training]\nlr = inf\n", ["[training] lr: must be a finite number, got inf"]),
    (GCNN + "[training]\nepochs = nan\n", ["[training] epochs: must be a finite number"]),
    (GCNN + "[training]\nepochs = 1e300\n", ["[training] epochs must be above 0 and at most 1,000,000"]),
    (GCNN + "[training]\nadadelta_rho = 2.0\n", ["[training] adadelta_rho must be between 0 and 1"]),
    (GCNN + "[features]\nunknown_word_scale = inf\n", ["[features] unknown_word_scale: must be a finite number"]),
    (GCNN + "[features]\npad_to_cutoff = 1\n", ["[features] pad_to_cutoff: expected true or false"]),
    (GCNN + "[features]\nexact_match_rule = \"lemma\"\n", ["[features] feature setting exact_match_rule"]),
    (GCNN + "[features]\nmax_premise_len = 1_000_000_000_000\npad_to_cutoff = true\n",
     ["[features] feature setting max_premise_len must be an integer from 1 to 10,000"]),
    (GCNN + "[features]\nmax_chars = 100_000\n", ["[features] feature setting max_chars must be an integer from 1 to 100"]),
    (GCNN + "[model\n", ["not valid TOML"]),
])
def test_a_wrong_value_names_file_table_and_key(tmp_path, text, fragments):
    refused(write_config(tmp_path, text), *fragments)


def test_a_config_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_bytes(GCNN.encode() + b"[model]\n# caf\xe9\n")
    refused(path, "line 3: not UTF-8")


def test_the_file_that_set_the_key_is_named(tmp_path):
    parent = write_config(tmp_path, GCNN + "[model]\nhidden_size = \"big\"\n", "parent.toml")
    child = write_config(tmp_path, 'extends = "parent.toml"\n[training]\nlr = 0.1\n', "child.toml")
    with pytest.raises(ConfigError) as caught:
        load_config(child)
    assert str(caught.value).startswith(f"{parent}: [model] hidden_size")


def test_a_parents_key_refused_under_the_childs_model_names_both_files(tmp_path):
    """A child that switches the model (GCNN's options under AMN) is refused naming the parent that set the keys
    and the child the user loaded (found by the property test of every config reader)."""
    child = write_config(tmp_path, GCNN + '[model]\nname = "amn"\n', "child.toml")
    with pytest.raises(ConfigError) as caught:
        load_config(child)
    message = str(caught.value)
    assert message.startswith(f"{CONFIG_DIR / 'gcnn.toml'}: [model]") and "unknown key" in message, message
    assert message.endswith(f"(reached from {child} through `extends`)"), message


def test_a_shipped_override_is_named_as_such(tmp_path):
    path = write_config(tmp_path, GCNN + "[shipped.model]\nhidden_size = -3\n")
    refused(path, "[shipped.model] hidden_size: must be a positive integer, got -3")


def test_shipped_size_of_a_non_table_is_a_config_error():
    with pytest.raises(ConfigError, match=r"\[shipped\] must be a table"):
        apply_size({"model": {"name": "gcnn"}, "shipped": 5}, "shipped")
    with pytest.raises(ConfigError, match="no \\[shipped\\] table"):
        check_config({"model": {"name": "gcnn"}}, "shipped")


def test_zero_means_automatic_where_the_default_is_zero(tmp_path):
    config = load_config(write_config(tmp_path, f'extends = "{CONFIG_DIR / "amn.toml"}"\n[model]\nhidden_size = 0\n'))
    assert config["model"]["hidden_size"] == 0
    refused(write_config(tmp_path, f'extends = "{CONFIG_DIR / "amn.toml"}"\n[model]\nhidden_size = -1\n'),
            "[model] hidden_size: must be 0 (automatic) or a positive integer")


def test_every_project_config_and_shipped_checkpoint_passes():
    for path in sorted(CONFIG_DIR.glob("*.toml")):
        config = load_config(path)
        for size in ("paper", "shipped") if "shipped" in config else ("paper",):
            check_config(config, size)
    from nlivis.features.settings import FeatureSettings

    for path in sorted((ROOT / "checkpoints").glob("*/config.json")):
        config = json.loads(path.read_text())
        registry.check_buildable(registry.model_class(config["model"]["name"]), model_config(config["model"]))
        FeatureSettings.from_dict(config["features"]["featurizer"])


def test_training_settings_refuse_non_finite_and_out_of_range_numbers():
    for key, value in [("lr", math.inf), ("lr", math.nan), ("epochs", -math.inf), ("eps", 0.0), ("sgd_fallback_lr", -1.0),
                       ("dropout_keep_decay_rate", 1.5)]:
        with pytest.raises(ConfigError, match=f"\\[training\\] {key}") as caught:
            TrainingSettings.from_dict({key: value})
        assert caught.value.key == key


# --------------------------------------------------------------------------------- models.build (any source)

def test_build_refuses_a_model_larger_than_memory_before_allocating():
    """A checkpoint's config.json with hidden_size 1e9 asked torch for 192 GB; now `build` (which
    `load_checkpoint` calls) refuses it from a shapes-only build on the meta device."""
    shipped = json.loads(next((ROOT / "checkpoints").glob("gcnn-*/config.json")).read_text())["model"]
    with pytest.raises(ConfigError) as caught:
        build({**shipped, "hidden_size": 1_000_000_000})
    message = str(caught.value)
    assert "[model]: the gcnn model these options describe is too large" in message
    with pytest.raises(ConfigError, match="parameters need .* GB, and this machine has"):
        build({**shipped, "hidden_size": 1_000_000})


def test_the_memory_limit_is_this_machines(monkeypatch):
    options = {"name": "esim", "hidden_size": 4, "word_dim": 6, "vocab_size": 30, "char_vocab_size": 10}
    needed = registry.check_buildable(registry.model_class("esim"), model_config(options))
    monkeypatch.setattr(registry, "physical_memory_bytes", lambda: needed - 1)
    with pytest.raises(ConfigError, match="this machine has"):
        build(options)
    monkeypatch.setattr(registry, "physical_memory_bytes", lambda: needed)
    assert build(options).count_parameters() > 0


@pytest.mark.parametrize(("options", "fragment"), [
    ({"hidden_size": "big"}, "[model] hidden_size: expected an integer, got 'big'"),
    ({"hidden_size": 2 ** 80}, "the esim model these options describe is too large to build"),
    ({"hidden_size": 300.5}, "expected an integer"),
    ({"dropout": "0.1"}, "[model] dropout: expected a number"),
    ({"vocab_size": 0}, "[model] vocab_size: must be a positive integer"),
    ({"bogus": 1}, "unknown key(s) ['bogus']"),
])
def test_build_checks_checkpoint_options(options, fragment):
    with pytest.raises(ConfigError) as caught:
        build({"name": "esim", "word_dim": 6, "vocab_size": 30, **options})
    assert fragment in str(caught.value)


def test_json_integral_floats_are_integers():
    assert model_config({"name": "esim", "hidden_size": 8.0}).hidden_size == 8


# ------------------------------------------------------------------------ command-line numbers (for cli/)

def test_epochs_on_the_command_line():
    from nlivis.data.options import epochs_problem

    assert epochs_problem(0.5) is None and epochs_problem(3) is None and epochs_problem(1_000_000) is None
    assert epochs_problem(float("inf")) == "--epochs must be a finite number of epochs above 0; got inf"
    assert "finite" in epochs_problem(float("nan")) and "above 0" in epochs_problem(0.0)
    assert epochs_problem(1e300) == "--epochs must be above 0 and at most 1,000,000; got 1e+300"


def test_seed_range_is_what_numpy_and_torch_accept():
    import numpy as np
    import torch

    from nlivis.data.options import SEED_RANGE, seed_problem

    low, high = SEED_RANGE
    assert seed_problem(low) is None and seed_problem(high) is None
    np.random.seed(high)
    torch.Generator().manual_seed(high * 100_003 + 1_000_000)  # the trainer's per-epoch batch seed at the bound
    assert seed_problem(2 ** 70) == ("--seed must be an integer from 0 to 4,294,967,295 (the seeds numpy and torch "
                                     "accept); got 1180591620717411303424")
    assert seed_problem(-1) is not None and seed_problem(True) is not None
    with pytest.raises((RuntimeError, ValueError), match="Overflow"):  # what --seed 2**70 met before: no option named
        torch.manual_seed(2 ** 70)


def test_integrated_gradients_steps():
    from nlivis.data.options import MAX_INTEGRATED_GRADIENTS_STEPS, integrated_gradients_steps_problem

    assert integrated_gradients_steps_problem(None) is None and integrated_gradients_steps_problem(1) is None
    assert integrated_gradients_steps_problem(MAX_INTEGRATED_GRADIENTS_STEPS) is None
    assert integrated_gradients_steps_problem(100_000_000) == (
        "--steps must be an integer from 1 to 10,000 integrated-gradients steps (leave it out for the adaptive "
        "50 to 800); got 100000000")
    assert integrated_gradients_steps_problem(0) is not None


def test_counts():
    from nlivis.data.options import count_problem

    assert count_problem(None, "--max-steps") is None and count_problem(5, "--max-steps") is None
    assert count_problem(0, "--max-steps") == "--max-steps must be an integer of at least 1; got 0"
    assert count_problem(65, "--threads", 1, 64) == "--threads must be an integer from 1 to 64; got 65"


def test_a_resolved_config_with_command_line_overrides_is_checked():
    """What the trainer can check once --model, --embeddings and --epochs are written in, before any data
    is read: gcnn's options given to --model esim are unknown to it."""
    from nlivis.training.config import check_resolved_config

    resolved = apply_size(load_config("gcnn"), "shipped")
    check_resolved_config(resolved)
    with pytest.raises(ConfigError, match=r"\[model\]: unknown key\(s\) \['aggregation_layers'"):
        check_resolved_config({**resolved, "model": {**resolved["model"], "name": "esim"}})
    with pytest.raises(ConfigError, match=r"\[training\] epochs: must be a finite number, got inf"):
        check_resolved_config({**resolved, "training": {**resolved["training"], "epochs": float("inf")}})


@pytest.mark.parametrize("name", ["gcnn", "diin", "esan", "amn", "attentive_conv", "esim"])
def test_the_shapes_only_build_runs_no_initialiser_and_counts_what_the_real_model_has(monkeypatch, name):
    """`check_buildable`'s meta build leaves initialisers undone (on the meta device some import torch._dynamo:
    2.5 s of CPU at every training start); its sizes are those of the model built for real, and a real tensor
    built inside the mode is initialised."""
    import torch

    config = load_config(name)
    options = apply_size(config, "shipped" if "shipped" in config else "paper")["model"]
    cls, checked = registry.model_class(options["name"]), model_config(options)
    model = cls(checked)
    tensors = [*model.parameters(), *model.buffers()]
    expected = (sum(t.numel() * t.element_size() for t in tensors), sum(t.numel() for t in model.parameters()))
    initialised = []
    for initialiser in ("_no_grad_normal_", "_no_grad_uniform_", "_no_grad_zero_", "_no_grad_fill_"):
        original = getattr(torch.nn.init, initialiser)
        monkeypatch.setattr(torch.nn.init, initialiser,
                            lambda *args, _original=original, **kwargs: initialised.append(1) or _original(*args, **kwargs))
    assert registry._meta_size.__wrapped__(cls, tuple(sorted(checked.to_dict().items())), "[model]") == expected
    assert not initialised
    with registry.ShapesOnly():
        real = torch.nn.Linear(3, 2)
    assert initialised and real.weight.abs().sum() > 0
