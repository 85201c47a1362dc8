"""gate_summary: mean and spread of each gate over real tokens only, known values, padding never counted."""
from __future__ import annotations

import math

import torch
from torch import nn

from nlivis.analysis.gates import gate_summary
from nlivis.features.batch import Batch
from nlivis.models.trace import Gate, Trace

PADDING_VALUE = 99.0
"""What the fake model writes at padded positions: a summary that counted padding would move far."""


def batch_of(premises: list[list[float]], width: int) -> Batch:
    """A batch whose premise ids carry the gate value ×10 of each token, right-padded to `width`."""
    rows = len(premises)
    ids = torch.zeros(rows, width, dtype=torch.long)
    mask = torch.zeros(rows, width, dtype=torch.bool)
    for row, values in enumerate(premises):
        ids[row, : len(values)] = torch.tensor([round(v * 10) for v in values])
        mask[row, : len(values)] = True
    hypothesis = torch.ones(rows, 1, dtype=torch.long)
    return Batch(premise_ids=ids, hypothesis_ids=hypothesis, premise_mask=mask,
                 hypothesis_mask=torch.ones(rows, 1, dtype=torch.bool), premise_chars=torch.zeros(rows, width, 1),
                 hypothesis_chars=torch.zeros(rows, 1, 1), premise_pos=torch.zeros_like(ids),
                 hypothesis_pos=torch.zeros_like(hypothesis), premise_exact_match=torch.zeros(rows, width),
                 hypothesis_exact_match=torch.zeros(rows, 1), labels=torch.zeros(rows, dtype=torch.long),
                 ids=[f"p{row}" for row in range(rows)], premise_tokens=[[]] * rows, hypothesis_tokens=[[]] * rows)


class GateFromIds(nn.Module):
    """Emits one premise gate [B, T, 2]: both dimensions are the token's id / 10, padding PADDING_VALUE."""

    def forward(self, batch: Batch, trace: bool = False):
        values = (batch.premise_ids.float() / 10).masked_fill(~batch.premise_mask, PADDING_VALUE)
        found = Trace()
        found.add("layer1.forget", Gate(values.unsqueeze(-1).expand(-1, -1, 2), "premise", 1, "forget"))
        return torch.zeros(len(batch), 3), found


def test_known_mean_and_standard_deviation_over_real_tokens():
    tokens = [0.2, 0.4, 0.6, 0.8]
    summary = gate_summary(GateFromIds(), [batch_of([[0.2, 0.4], [0.6]], 5), batch_of([[0.8]], 3)], "fake")
    row = summary.iloc[0]
    mean = sum(tokens) / 4
    std = math.sqrt(sum((t - mean) ** 2 for t in tokens) / 4)
    assert (row["model"], row["entry"], row["gate"], row["layer"], row["tokens"]) == ("fake", "layer1.forget", "forget",
                                                                                      1, "premise")
    assert math.isclose(row["mean"], mean, abs_tol=1e-6) and math.isclose(row["std"], std, abs_tol=1e-6)
    assert row["pairs"] == 3 and row["tokens_seen"] == 4


def test_padding_does_not_change_the_summary():
    pairs = [[0.1, 0.9, 0.5], [0.3]]
    narrow = gate_summary(GateFromIds(), [batch_of(pairs, 3)])
    wide = gate_summary(GateFromIds(), [batch_of(pairs, 12)])
    one_by_one = gate_summary(GateFromIds(), [batch_of([pair], len(pair)) for pair in pairs])
    for other in (wide, one_by_one):
        assert math.isclose(narrow.iloc[0]["mean"], other.iloc[0]["mean"], abs_tol=1e-6)
        assert math.isclose(narrow.iloc[0]["std"], other.iloc[0]["std"], abs_tol=1e-6)


def test_a_model_without_gates_gives_an_empty_table_with_the_columns():
    class NoGates(nn.Module):
        def forward(self, batch: Batch, trace: bool = False):
            return torch.zeros(len(batch), 3), Trace()

    summary = gate_summary(NoGates(), [batch_of([[0.5]], 1)])
    assert summary.empty and {"mean", "std", "tokens_seen"} <= set(summary.columns)
