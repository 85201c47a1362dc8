"""Every config in configs/, built small: the contracts every model keeps, checked generically.

Only the shared contracts are used (registry, `tiny_overrides`, Batch, typed Trace), so a new model
or config is covered by adding its file.
"""
from __future__ import annotations

import tomllib
from functools import cache

import pytest
import torch

from nlivis.models.base import MatchingModel
from nlivis.models.inspect import random_batch
from nlivis.models.registry import build, model_class
from nlivis.models.trace import (Alignment, FeatureMaps, Gate, MemoryKeys, OutputDistribution,
                                 Representation, Trace)
from nlivis.training.config import CONFIG_DIR, load_config

CONFIG_NAMES = sorted(path.stem for path in CONFIG_DIR.glob("*.toml"))
"""Every config in configs/ by name, read from the file names: loading a config checks it by building its models on
torch's meta device (two seconds for all of them), which the test that uses it does, never collection."""
PREMISE_LENGTHS = [5, 3, 4, 1]
HYPOTHESIS_LENGTHS = [4, 2, 1, 3]
TRACE_TYPES = (Alignment, Gate, FeatureMaps, MemoryKeys, Representation, OutputDistribution)


@cache
def project_config(config_name: str) -> dict:
    """configs/<config_name>.toml loaded and checked (`load_config`), once per test process."""
    return load_config(CONFIG_DIR / f"{config_name}.toml")


def tiny_model(config_name: str, seed: int = 0) -> MatchingModel:
    options = dict(project_config(config_name)["model"])
    options.update(model_class(options["name"]).tiny_overrides)
    torch.manual_seed(seed)
    return build(options)


def batch_for(model: MatchingModel, pad_premise_to: int | None = None, pad_hypothesis_to: int | None = None):
    return random_batch(PREMISE_LENGTHS, HYPOTHESIS_LENGTHS, model.config.vocab_size, model.config.char_vocab_size,
                        pad_premise_to=pad_premise_to, pad_hypothesis_to=pad_hypothesis_to,
                        num_classes=model.config.num_classes, seed=3)


def parent_of(config_name: str) -> str | None:
    raw = tomllib.loads((CONFIG_DIR / f"{config_name}.toml").read_text(encoding="utf-8"))
    parent = raw.get("extends")
    return None if parent is None else parent.removesuffix(".toml")


def mask_of(batch, sentence: str) -> torch.Tensor:
    return batch.premise_mask if sentence == "premise" else batch.hypothesis_mask


@pytest.fixture(params=CONFIG_NAMES)
def config_name(request) -> str:
    return request.param


def test_configs_were_found():
    assert "gcnn" in CONFIG_NAMES


def test_forward_gives_plain_logits(config_name):
    model = tiny_model(config_name).eval()
    batch = batch_for(model)
    logits = model(batch)
    assert isinstance(logits, torch.Tensor)
    assert logits.shape == (len(PREMISE_LENGTHS), model.config.num_classes)
    assert torch.isfinite(logits).all()


def test_padding_does_not_change_logits(config_name):
    model = tiny_model(config_name).eval()
    with torch.no_grad():
        tight = model(batch_for(model))
        padded = model(batch_for(model, pad_premise_to=max(PREMISE_LENGTHS) + 3,
                                 pad_hypothesis_to=max(HYPOTHESIS_LENGTHS) + 3))
    torch.testing.assert_close(padded, tight, atol=1e-5, rtol=1e-4)


def test_trace_entries_are_typed_and_batch_first(config_name):
    model = tiny_model(config_name).eval()
    batch = batch_for(model)
    with torch.no_grad():
        logits, trace = model(batch, trace=True)
    assert isinstance(trace, Trace) and len(trace) > 1
    size, lengths = len(batch), {"premise": batch.premise_ids.shape[1], "hypothesis": batch.hypothesis_ids.shape[1]}
    for name, entry in trace.items():
        assert isinstance(entry, TRACE_TYPES), name
        if isinstance(entry, Alignment):
            assert entry.weights.shape == (size, lengths[entry.rows], lengths[entry.cols]), name
        elif isinstance(entry, (Gate, MemoryKeys)):
            values = entry.values if isinstance(entry, Gate) else entry.weights
            assert values.dim() == 3 and values.shape[:2] == (size, lengths[entry.tokens]), name
        elif isinstance(entry, FeatureMaps):
            assert entry.maps.dim() == 4 and entry.maps.shape[0] == size, name
            if entry.token_axes:
                assert entry.maps.shape[2:] == (lengths["premise"], lengths["hypothesis"]), name
        elif isinstance(entry, Representation):
            assert entry.vector.dim() == 2 and entry.vector.shape[0] == size, name
    last = list(trace.items())[-1][1]
    assert isinstance(last, OutputDistribution) and last.probs.shape == logits.shape
    torch.testing.assert_close(last.probs.sum(-1), torch.ones(size))


SWITCH_COMBINATIONS = [
    ("gcnn", {"forget_gate": False, "output_gate": False}), ("gcnn", {"context_layer": "glu"}),
    ("diin", {"fuse": "one_gate"}), ("diin", {"interaction": "similarity"}), ("diin", {"fuse": "addition"}),
    ("diin", {"encoding": "none", "feature_extractor": "none"}), ("esan", {"augmentation": "simple"}),
    ("esan", {"use_word_features": False, "use_contextual_features": False}), ("attentive_conv", {"version": "light"}),
    ("attentive_conv", {"use_gate": False}),
]
"""Switch settings no shipped config uses, whose trace types must still be declared right."""


def _emitted_types(model: MatchingModel) -> set[type]:
    with torch.no_grad():
        _, trace = model(batch_for(model), trace=True)
    return {type(entry) for _, entry in trace.items()}


def test_the_model_declares_exactly_the_trace_types_it_emits(config_name):
    model = tiny_model(config_name).eval()
    assert _emitted_types(model) == model.trace_types()


@pytest.mark.parametrize("family,switches", SWITCH_COMBINATIONS, ids=lambda v: v if isinstance(v, str) else
                         ",".join(f"{k}={s}" for k, s in v.items()))
def test_switches_no_config_uses_declare_their_trace_types_too(family, switches):
    options = {**dict(project_config(family)["model"]), **model_class(family).tiny_overrides, **switches}
    torch.manual_seed(0)
    model = build(options).eval()
    assert _emitted_types(model) == model.trace_types()


def test_attention_ignores_padding_and_rows_sum_to_one(config_name):
    model = tiny_model(config_name).eval()
    batch = batch_for(model, pad_premise_to=max(PREMISE_LENGTHS) + 2, pad_hypothesis_to=max(HYPOTHESIS_LENGTHS) + 2)
    with torch.no_grad():
        _, trace = model(batch, trace=True)
    for name, entry in trace.of_type(Alignment).items():
        if entry.kind == "similarity":
            continue
        rows, cols = mask_of(batch, entry.rows), mask_of(batch, entry.cols)
        weights = entry.weights
        assert (weights.masked_select(~cols.unsqueeze(1).expand_as(weights)) == 0).all(), name
        real_rows = weights[rows]  # [real rows, C]
        torch.testing.assert_close(real_rows.sum(-1), torch.ones(real_rows.shape[0]), msg=name)
        assert (weights >= 0).all(), name
        if entry.kind == "sparsemax":
            real_cells = weights.masked_select(rows.unsqueeze(2) & cols.unsqueeze(1))
            assert (real_cells == 0).any(), f"{name}: sparsemax gave no exact zero on real cells"


def test_gradients_reach_every_trainable_parameter(config_name):
    model = tiny_model(config_name).train()
    batch = batch_for(model)
    logits = model(batch)
    loss = model.loss(logits, batch.labels) + sum(model.regularization_terms().values(), torch.tensor(0.0))
    loss.backward()
    word_rows = model.word_embedding.weight
    assert not word_rows.requires_grad  # frozen by default: pretrained rows are shared between checkpoints
    missing = [name for name, p in model.named_parameters()
               if p.requires_grad and (p.grad is None or not p.grad.abs().sum() > 0)]
    assert not missing, f"no gradient reaches {missing}"


def test_ablation_changes_the_computation(config_name):
    parent = parent_of(config_name)
    if parent is None:
        pytest.skip(f"{config_name} is a full model, not a variant")
    child, base = tiny_model(config_name), tiny_model(parent)
    shapes = {n: tuple(p.shape) for n, p in child.named_parameters()}
    base_shapes = {n: tuple(p.shape) for n, p in base.named_parameters()}
    if shapes != base_shapes:
        return
    batch = batch_for(child)
    with torch.no_grad():
        child_logits, base_logits = child.eval()(batch), base.eval()(batch)
        # A switch may change only the output layer (AMN: softmax vs sparsemax over the same scores),
        # so compare what the model predicts, not only its raw scores.
        same_scores = torch.allclose(child_logits, base_logits)
        same_probabilities = torch.allclose(child.probabilities(child_logits), base.probabilities(base_logits))
        assert not (same_scores and same_probabilities), f"{config_name} computes the same as {parent}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here: the CUDA backward step runs wherever one is")
def test_one_training_step_runs_on_cuda(config_name):
    """Forward, loss and backward of every config on a GPU (cuDNN's recurrent kernels refuse a backward
    through an inference-mode call, which CPU never checks)."""
    model = tiny_model(config_name).cuda().train()
    batch = batch_for(model).to(torch.device("cuda"))
    loss = model.loss(model(batch), batch.labels)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert torch.isfinite(loss) and grads and all(torch.isfinite(g).all() for g in grads)


def test_inspect_takes_a_config_name_or_a_toml_path(tmp_path, capsys):
    from nlivis.cli import main

    assert main(["inspect", "--config", "esan-quora", "--params"]) == 0
    assert "(3.85M)" in capsys.readouterr().out  # the paper's 3.9M Quora setting
    ablation = tmp_path / "mine.toml"
    ablation.write_text(f'extends = "{CONFIG_DIR / "esan.toml"}"\n[model]\nuse_pos = false\nuse_exact_match = false\n')
    assert main(["inspect", "--config", str(ablation), "--params"]) == 0
    out = capsys.readouterr().out
    assert "(3.85M)" in out and str(ablation) in out
    assert main(["inspect", "--model", "esan", "--params"]) == 0 and "(4.76M)" in capsys.readouterr().out
