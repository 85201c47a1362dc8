"""MiniLM's training step and inference in nlivis against the identical encoder run through Hugging Face
`transformers` (`BertModel`), on the same batches, in one run, as a ratio (`python -m nlivis bench`).

`transformers` is not a dependency of nlivis: it is measured only where it is installed (a bench environment of
its own, bench/RESULTS.md says how); elsewhere the rows say "transformers not installed" and only nlivis's numbers
are given. The two encoders get the same weights (nlivis's, copied through the fetched checkpoint's tensor names,
`models.minilm.RENAMES`), the same classifier on the output pooled the same way (the config's pooling) and the same
packed `[CLS] premise [SEP] hypothesis [SEP]` sequence (`joint_sequence`, inside the timed call for both), so before
anything is timed their outputs are compared (largest absolute difference, dropout off). Speed does not depend on
the weights' values, so the encoder is randomly initialised (no fetch needed). Threads: torch's setting, the same
for both.
"""
from __future__ import annotations

import importlib.util
import re
import statistics
import time
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any, Callable, Sequence

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.features.wordpieces import SEP_PIECE
from nlivis.models import build
from nlivis.models.minilm import LAYER_NORM_EPS, RENAMES, MiniLM, joint_sequence
from nlivis.workflows.bench import LATENCY_LENGTH, LATENCY_PAIRS, bench_config, length_bucketed_batches, synthetic_batch

IMPLEMENTATIONS = ("sdpa", "eager")
"""transformers' attention implementations measured: its default (PyTorch's fused scaled-dot-product attention)
and the plain one that computes the softmax as nlivis does."""
SAME_OUTPUTS = 1e-4
"""The largest absolute logit difference still counted as the same encoder (float32 rounding is ~1e-6)."""
SECOND_PIECE_SHARE = 0.25
"""About a quarter of the synthetic words get a second word piece (English text averages ~1.2 pieces a word)."""


def transformers_installed() -> bool:
    return importlib.util.find_spec("transformers") is not None


def with_pieces(batch: Batch, seed: int, piece_vocab_size: int) -> Batch:
    """`batch` with word pieces [B, T, 2] for its real words (a second piece for about `SECOND_PIECE_SHARE` of them),
    ids drawn above the special pieces; a word-level synthetic batch becomes one MiniLM reads."""
    generator = torch.Generator().manual_seed(seed)

    def pieces(mask: torch.Tensor) -> torch.Tensor:
        ids = torch.randint(SEP_PIECE + 2, piece_vocab_size, (*mask.shape, 2), generator=generator)  # [B, T, 2]
        second = torch.rand(mask.shape, generator=generator) < SECOND_PIECE_SHARE  # [B, T]
        return ids * torch.stack([mask, mask & second], dim=-1)  # PAD (0) on padding and absent second pieces

    return replace(batch, premise_pieces=pieces(batch.premise_mask), hypothesis_pieces=pieces(batch.hypothesis_mask))


class TransformersCrossEncoder(nn.Module):
    """transformers' `BertModel` with nlivis's classifier on its output pooled as the config says ([CLS] or the mean
    over real pieces): MiniLM's forward, by another library."""

    def __init__(self, bert: nn.Module, classifier: nn.Module, pooling: str):
        super().__init__()
        self.bert, self.classifier, self.pooling = bert, classifier, pooling

    def forward(self, batch: Batch) -> torch.Tensor:
        sequence = joint_sequence(batch.premise_pieces, batch.hypothesis_pieces)  # as nlivis packs it
        hidden = self.bert(input_ids=sequence.ids, attention_mask=sequence.real.long(),
                           token_type_ids=sequence.segments, position_ids=sequence.positions).last_hidden_state
        if self.pooling == "cls":
            return self.classifier(hidden[:, 0])  # [B, C]
        weights = sequence.real.unsqueeze(-1).to(hidden.dtype)  # [B, L, 1]
        return self.classifier((hidden * weights).sum(1) / weights.sum(1))  # [B, C]


def transformers_twin(model: MiniLM, implementation: str) -> TransformersCrossEncoder:
    """The same encoder in transformers, with `model`'s weights (its frozen parts frozen there too)."""
    from transformers import BertConfig, BertModel

    c = model.config
    config = BertConfig(vocab_size=c.piece_vocab_size, hidden_size=c.word_dim, num_hidden_layers=c.encoder_layers,
                        num_attention_heads=c.attention_heads, intermediate_size=c.intermediate_size,
                        max_position_embeddings=c.max_positions, type_vocab_size=2, hidden_act="gelu",
                        hidden_dropout_prob=c.dropout, attention_probs_dropout_prob=c.dropout,
                        layer_norm_eps=LAYER_NORM_EPS)
    bert = BertModel._from_config(config, attn_implementation=implementation, add_pooling_layer=False)
    ours = model.state_dict()
    weights = {name: ours[_our_name(name)] for name in bert.state_dict() if _our_name(name) in ours}
    missing = set(bert.state_dict()) - set(weights) - {n for n in bert.state_dict() if n.endswith("position_ids")}
    if missing:
        raise RuntimeError(f"transformers' BertModel has tensors nlivis's MiniLM lacks: {sorted(missing)[:3]}")
    bert.load_state_dict(weights, strict=False)
    twin = TransformersCrossEncoder(bert, nn.Sequential(nn.Dropout(c.dropout), nn.Linear(c.word_dim, c.num_classes)),
                                    c.pooling)
    twin.classifier.load_state_dict(model.classifier.state_dict())
    frozen = {name for name, p in model.named_parameters() if not p.requires_grad}
    for name, parameter in bert.named_parameters():
        parameter.requires_grad_(_our_name(name) not in frozen)
    return twin


def _our_name(name: str) -> str:
    """A Hugging Face BERT tensor name under nlivis's MiniLM's names (`RENAMES`), or unchanged."""
    for pattern, replacement in RENAMES:
        if re.match(pattern, name):
            return re.sub(pattern, replacement, name)
    return name


def largest_differences(model: MiniLM, twin: TransformersCrossEncoder, batches: Sequence[Batch]) -> tuple[float, float]:
    """(largest |Δ logit|, largest |Δ final hidden state| on real pieces) over `batches`, dropout off."""
    model.eval(), twin.eval()
    logits = hidden = 0.0
    with torch.inference_mode():
        for batch in batches:
            logits = max(logits, float((model(batch) - twin(batch)).abs().max()))
            sequence, ours, _ = model.encode(batch)
            theirs = twin.bert(input_ids=sequence.ids, attention_mask=sequence.real.long(),
                               token_type_ids=sequence.segments, position_ids=sequence.positions).last_hidden_state
            hidden = max(hidden, float((ours - theirs).abs()[sequence.real].max()))
    return logits, hidden


@dataclass
class Speeds:
    """One encoder's numbers: training and inference pairs per second, the 8×20 latency in ms."""

    train_pairs_per_s: float
    infer_pairs_per_s: float
    latency_ms: float


def _synchronise(batches: Sequence[Batch]) -> None:
    if batches[0].labels.is_cuda:  # CUDA runs asynchronously: a timing ends when the device is done
        torch.cuda.synchronize()


def _train_call(forward: nn.Module, batches: Sequence[Batch], optimizer: torch.optim.Optimizer) -> Callable[[], None]:
    def call() -> None:
        forward.train()
        for batch in batches:
            optimizer.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(forward(batch), batch.labels).backward()  # MiniLM's loss
            optimizer.step()
        _synchronise(batches)
    return call


def _infer_call(forward: nn.Module, batches: Sequence[Batch]) -> Callable[[], None]:
    def call() -> None:
        forward.eval()
        with torch.inference_mode():
            for batch in batches:
                forward(batch)
        _synchronise(batches)
    return call


def interleaved_seconds(calls: dict[str, Callable[[], None]], repeats: int, warmup: int) -> dict[str, float]:
    """Each call's median seconds, the calls taking turns round by round: on a busy machine a change of load then
    slows every encoder alike instead of whichever was being timed."""
    for _ in range(warmup):
        for call in calls.values():
            call()
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            seconds[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in seconds.items()}


def speeds(encoders: dict[str, nn.Module], work: "Work", repeats: int, warmup: int) -> dict[str, Speeds]:
    """Every encoder timed on the shared batches, taking turns (`interleaved_seconds`), each with its own Adam."""
    optimizers = {name: torch.optim.Adam([p for p in e.parameters() if p.requires_grad], lr=1e-4)
                  for name, e in encoders.items()}
    train = interleaved_seconds({name: _train_call(e, work.train, optimizers[name]) for name, e in encoders.items()},
                                repeats, warmup)
    infer = interleaved_seconds({name: _infer_call(e, work.infer) for name, e in encoders.items()}, repeats, warmup)
    latency = interleaved_seconds({name: _infer_call(e, [work.latency]) for name, e in encoders.items()},
                                  repeats, warmup)
    return {name: Speeds(work.train_pairs / train[name], work.infer_pairs / infer[name], latency[name] * 1000)
            for name in encoders}


@dataclass
class Work:
    """The batches both encoders run: length-bucketed training batches, inference batches, the 8×20 batch."""

    train: list[Batch]
    infer: list[Batch]
    latency: Batch

    @property
    def train_pairs(self) -> int:
        return sum(len(b.labels) for b in self.train)

    @property
    def infer_pairs(self) -> int:
        return sum(len(b.labels) for b in self.infer)


def shared_work(config: dict[str, Any], train_batches: int, infer_batch_size: int, infer_batches: int,
                device: torch.device) -> Work:
    features, model = config.get("features", {}), config["model"]
    max_p, max_h = int(features.get("max_premise_len", 48)), int(features.get("max_hypothesis_len", 48))
    vocab = int(model["piece_vocab_size"])
    batch_size = int(config.get("training", {}).get("batch_size", 32))
    train = [with_pieces(b, 100 + k, vocab)
             for k, b in enumerate(length_bucketed_batches(batch_size, max_p, max_h, train_batches, seed=1))]
    infer = [with_pieces(b, 200 + k, vocab)
             for k, b in enumerate(length_bucketed_batches(infer_batch_size, max_p, max_h, infer_batches, seed=2))]
    latency = with_pieces(synthetic_batch(LATENCY_PAIRS, max_p, max_h, seed=11, fixed_length=LATENCY_LENGTH), 300, vocab)
    return Work([b.to(device) for b in train], [b.to(device) for b in infer], latency.to(device))


def comparison_lines(device: torch.device, repeats: int, warmup: int, train_batches: int = 2,
                     infer_batch_size: int = 64, infer_batches: int = 2) -> list[str]:
    """The report's section: how it was measured, whether the outputs agree, and the table."""
    config = bench_config("minilm", "shipped")
    config["model"] = {**config["model"], "pretrained": False}  # speed needs no fetched weights
    torch.manual_seed(0)
    model = build(config["model"]).to(device)
    work = shared_work(config, train_batches, infer_batch_size, infer_batches, device)
    c = model.config
    tuned = sum(p.numel() for p in model.parameters() if p.requires_grad)
    lines = [f"MiniLM (shipped config: {c.encoder_layers} layers × {c.attention_heads} heads, width {c.word_dim}, "
             f"{model.count_parameters() / 1e6:.1f}M parameters besides the word-piece rows, {tuned / 1e6:.2f}M of "
             f"them tuned, {c.pooling} pooling; training batch {len(work.train[0].labels)} "
             f"× {len(work.train)} length-bucketed batches, inference {infer_batch_size} × {infer_batches}, "
             f"synthetic words of 1–2 pieces) in nlivis against the same encoder through Hugging Face transformers, "
             f"same weights and batches, in this run:"]
    encoders: dict[str, nn.Module] = {"nlivis": model}
    if transformers_installed():
        for implementation in IMPLEMENTATIONS:  # built and checked before any weight is trained
            twin = transformers_twin(model, implementation).to(device)
            logits, hidden = largest_differences(model, twin, [work.train[0], work.latency])
            same = "same outputs" if logits <= SAME_OUTPUTS else "NOT the same outputs: the ratio compares different models"
            lines.append(f"transformers {metadata.version('transformers')} ({implementation} attention): largest "
                         f"|Δ logit| {logits:.2e}, largest |Δ final hidden state| {hidden:.2e} (dropout off): {same}")
            encoders[implementation] = twin
    measured = speeds(encoders, work, repeats, warmup)
    ours = measured.pop("nlivis")
    if not transformers_installed():
        return lines + ["", *_table(ours, {}), "", "transformers not installed in this environment: only nlivis's "
                        "rows are measured (install it in a bench environment of its own, bench/RESULTS.md)"]
    return lines + ["", *_table(ours, measured)]


def _table(ours: Speeds, theirs: dict[str, Speeds]) -> list[str]:
    """nlivis's numbers, each transformers implementation's and the ratio nlivis ÷ transformers in speed
    (above 1: nlivis is faster)."""
    names = list(theirs) or ["sdpa"]
    header = "| MiniLM | nlivis | " + " | ".join(f"transformers ({n}) | nlivis ÷ transformers ({n})" for n in names) + " |"
    lines = [header, "|" + "---|" * (2 + 2 * len(names))]
    for label, value, faster_when_higher in (("training pairs/s", lambda s: s.train_pairs_per_s, True),
                                             ("inference pairs/s", lambda s: s.infer_pairs_per_s, True),
                                             (f"{LATENCY_PAIRS}×{LATENCY_LENGTH} latency (ms)", lambda s: s.latency_ms, False)):
        cells = []
        for name in names:
            if name not in theirs:
                cells += ["transformers not installed", "–"]
                continue
            ratio = value(ours) / value(theirs[name]) if faster_when_higher else value(theirs[name]) / value(ours)
            cells += [f"{value(theirs[name]):.1f}", f"{ratio:.2f}×"]
        lines.append(f"| {label} | {value(ours):.1f} | " + " | ".join(cells) + " |")
    return lines
