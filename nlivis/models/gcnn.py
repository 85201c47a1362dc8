"""GCNN: gated convolutional compare-aggregate model (Chen et al., Interspeech 2018; papers/000).

Five layers: token features (word embedding, optionally a char vector composed by the same gated
convolutions over characters (eq. 9) and a 47-d POS one-hot), a context stack of gated convolutions
(eq. 2, projection eq. 3 where widths differ), dot-product attention in both directions with
`[x; α; |x−α|; x∘α]` comparison vectors (eqs. 5–7), an aggregation stack, max+mean pooling of both
sentences (eq. 8) and an MLP with one ReLU hidden layer.

Choices the paper leaves open, made here and named in the config: the kernel width (3, the paper's
example), the memory cell before the first layer (zero, as an LSTM's initial cell, so the first forget
gate still decides how much of the projected input enters the cell), the MLP hidden width (= hidden)
and "same" zero padding of every convolution. Padded tokens are zeroed before each convolution, so a
sentence's outputs do not depend on how far the batch is padded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.layers.conv import TokenConv
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.models.layers.masking import masked_max, masked_mean, masked_softmax, zero_padding
from nlivis.models.registry import register
from nlivis.models.trace import Alignment, Gate, Representation, Trace



@dataclass
class GCNNConfig(ModelConfig):
    hidden_size: int = 300
    """Feature maps of every convolution layer (paper: 300)."""
    kernel_width: int = 3
    """Width k of every word-level convolution (the paper's worked example uses 3)."""
    context_layers: int = 4
    """Convolution layers in the context representation stack (paper: 4)."""
    aggregation_layers: int = 2
    """Convolution layers in the aggregation stack (paper: 2)."""
    context_layer: str = "gcnn"
    """Block used in the context and aggregation stacks: "gcnn" (eq. 2), "cnn" (ReLU conv plus residual,
    the paper's CNN baseline) or "glu" (eq. 1, Dauphin et al.'s gated linear unit)."""
    forget_gate: bool = True
    """GCNN only. False is "GCNN − forget gate": no memory cell, h = o∘g + h_prev (Table 2)."""
    output_gate: bool = True
    """GCNN only. False is "GCNN − output gate": h = ReLU(conv) + c, with ReLU instead of tanh for g (Table 2)."""
    use_chars: bool = False
    """Add the char-composition vector (Table 1 "GCNN (char)"). The main "GCNN" row uses words only."""
    char_dim: int = 40
    """Char embedding width (paper: 40)."""
    char_hidden_size: int = 100
    """Width of the char-composition vector (paper: 100)."""
    char_layers: int = 2
    """Gated convolution layers over the characters of a word (paper: 2)."""
    char_kernel_width: int = 3
    """Kernel width over characters (not given in the paper; 3 like the word level)."""
    use_pos: bool = False
    """Add the 47-d one-hot POS tag (Table 1 "GCNN (char+POS)")."""
    mlp_hidden_size: int = 300
    """Hidden width of the prediction MLP (not given in the paper; = hidden_size)."""


def _token_conv(in_dim: int, out_dim: int, kernel_width: int) -> nn.Conv1d:
    """A "same"-padded convolution over tokens [B, m, T] → [B, n, T]."""
    return nn.Conv1d(in_dim, out_dim, kernel_width, padding=kernel_width // 2)


class GatedConvBlock(nn.Module):
    """One layer of the context/aggregation stacks over [B, T, m] → [B, T, n], the paper's (eq. 2):
    o = σ(conv_o), f = σ(conv_f), g = tanh(conv_g), c = f∘c_prev + (1−f)∘W_p h_prev, h = o∘g + c.
    `forget_gate=False` drops f and c (h = o∘g + W_p h_prev); `output_gate=False` drops o and uses ReLU
    for g (h = g + c). W_p (eq. 3) exists only where m ≠ n; elsewhere it is the identity. The gates'
    convolutions are `nn.Conv1d` parameters applied to one shared prepared input (layers/conv.py).
    The other layer kinds of CONV_BLOCKS share its interface."""

    def __init__(self, in_dim: int, out_dim: int, kernel_width: int, forget_gate: bool, output_gate: bool):
        super().__init__()
        self.out_dim = out_dim
        self.candidate = _token_conv(in_dim, out_dim, kernel_width)  # W_g
        self.output = _token_conv(in_dim, out_dim, kernel_width) if output_gate else None  # W_o
        self.forget = _token_conv(in_dim, out_dim, kernel_width) if forget_gate else None  # W_f
        self.projection = nn.Linear(in_dim, out_dim, bias=False) if in_dim != out_dim else None  # W_p, eq. 3

    @staticmethod
    def has_gates(forget_gate: bool, output_gate: bool) -> bool:
        """Whether blocks of this kind with these options have gates to trace (as `Gate` entries)."""
        return forget_gate or output_gate

    def forward(self, h: torch.Tensor, cell: torch.Tensor | None, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor | None, dict[str, torch.Tensor]]:
        # B batch, T tokens, m in width, n out width; returns h [B, T, n], cell [B, T, n] or None, gates
        x = TokenConv.for_conv(zero_padding(h, mask), self.candidate)  # shared by the gates' convolutions
        candidate = x(self.candidate)  # [B, T, n]
        gates: dict[str, torch.Tensor] = {}
        carried = self.projection(h) if self.projection is not None else h  # W_p h_prev  [B, T, n]
        if self.output is not None:
            o = torch.sigmoid(x(self.output))  # [B, T, n]
            gates["output"] = o
            transformed = o * torch.tanh(candidate)
        else:
            transformed = torch.relu(candidate)
        if self.forget is not None:
            f = torch.sigmoid(x(self.forget))  # [B, T, n]
            gates["forget"] = f
            previous = cell if cell is not None else torch.zeros_like(candidate)
            cell = zero_padding(f * previous + (1.0 - f) * carried, mask)  # [B, T, n]
            return zero_padding(transformed + cell, mask), cell, gates
        return zero_padding(transformed + carried, mask), None, gates


class ResidualConvBlock(nn.Module):
    """The "cnn" baseline (Table 1): h = ReLU(conv_c) + W_p h_prev, no gates and no cell."""

    def __init__(self, in_dim: int, out_dim: int, kernel_width: int, forget_gate: bool, output_gate: bool):
        super().__init__()
        self.out_dim = out_dim
        self.candidate = _token_conv(in_dim, out_dim, kernel_width)  # W_c
        self.projection = nn.Linear(in_dim, out_dim, bias=False) if in_dim != out_dim else None  # W_p, eq. 3

    @staticmethod
    def has_gates(forget_gate: bool, output_gate: bool) -> bool:
        return False

    def forward(self, h: torch.Tensor, cell: torch.Tensor | None, mask: torch.Tensor
                ) -> tuple[torch.Tensor, None, dict[str, torch.Tensor]]:
        # B batch, T tokens, m in width, n out width
        candidate = TokenConv.for_conv(zero_padding(h, mask), self.candidate)(self.candidate)  # [B, T, n]
        carried = self.projection(h) if self.projection is not None else h  # W_p h_prev  [B, T, n]
        return zero_padding(torch.relu(candidate) + carried, mask), None, {}


class GLUBlock(nn.Module):
    """The "glu" baseline (eq. 1): h = conv_W ∘ σ(conv_V), no residual and no cell."""

    def __init__(self, in_dim: int, out_dim: int, kernel_width: int, forget_gate: bool, output_gate: bool):
        super().__init__()
        self.out_dim = out_dim
        self.candidate = _token_conv(in_dim, out_dim, kernel_width)  # W
        self.output = _token_conv(in_dim, out_dim, kernel_width)  # V

    @staticmethod
    def has_gates(forget_gate: bool, output_gate: bool) -> bool:
        return True

    def forward(self, h: torch.Tensor, cell: torch.Tensor | None, mask: torch.Tensor
                ) -> tuple[torch.Tensor, None, dict[str, torch.Tensor]]:
        # B batch, T tokens, m in width, n out width
        x = TokenConv.for_conv(zero_padding(h, mask), self.candidate)  # shared by both convolutions
        o = torch.sigmoid(x(self.output))  # [B, T, n]
        return zero_padding(x(self.candidate) * o, mask), None, {"output": o}


CONV_BLOCKS: dict[str, type[GatedConvBlock] | type[ResidualConvBlock] | type[GLUBlock]] = {
    "gcnn": GatedConvBlock, "cnn": ResidualConvBlock, "glu": GLUBlock}
"""The `context_layer` option → the layer kind of every stack (RE2-style: a part chosen by name)."""


class ConvStack(nn.Module):
    """Stacked blocks of one kind of CONV_BLOCKS sharing one memory cell path (the cell is updated along layers, not time)."""

    def __init__(self, in_dim: int, width: int, layers: int, kernel_width: int, kind: str,
                 forget_gate: bool, output_gate: bool):
        super().__init__()
        if kind not in CONV_BLOCKS:
            raise ValueError(f"context_layer must be one of {tuple(CONV_BLOCKS)}, got {kind!r}")
        dims = [in_dim] + [width] * layers
        self.blocks = nn.ModuleList(
            CONV_BLOCKS[kind](dims[i], dims[i + 1], kernel_width, forget_gate, output_gate) for i in range(layers))

    def forward(self, h: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, list[dict[str, torch.Tensor]]]:
        # B batch, T tokens, n width; returns the top layer [B, T, n] and per layer its gates [B, T, n]
        cell = None
        gates = []
        for block in self.blocks:
            h, cell, layer_gates = block(h, cell, mask)
            gates.append(layer_gates)
        return h, gates


class CharComposer(nn.Module):
    """Eq. 9: char embeddings → the same gated convolution stack over a word's characters → max over chars."""

    def __init__(self, config: GCNNConfig):
        super().__init__()
        self.embedding = nn.Embedding(config.char_vocab_size, config.char_dim, padding_idx=0)
        self.stack = ConvStack(config.char_dim, config.char_hidden_size, config.char_layers,
                               config.char_kernel_width, config.context_layer, config.forget_gate,
                               config.output_gate)
        self.output_dim = config.char_hidden_size

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, C chars per word, e char dim, F output width
        b, t, c = chars.shape
        flat = chars.reshape(b * t, c)
        char_mask = flat != 0  # [B·T, C]
        h, _ = self.stack(self.embedding(flat), char_mask)  # [B·T, C, F]
        return masked_max(h, char_mask, dim=1).view(b, t, -1)  # [B, T, F]; padding words → 0


@register("gcnn")
class GCNN(MatchingModel):
    """Gated convolutional compare-aggregate network; see the module docstring for the equations."""

    config_class = GCNNConfig
    max_inference_batch: ClassVar[int] = 64
    """Measured (bench/results/eval-batch-*.md): 1.39× less time per pair than 256 at the shipped size (paper
    size: within 3% of 32)."""
    tiny_overrides: ClassVar[dict] = {
        "hidden_size": 8, "context_layers": 2, "aggregation_layers": 1, "char_dim": 4,
        "char_hidden_size": 6, "char_layers": 1, "mlp_hidden_size": 8, "word_dim": 10, "vocab_size": 30,
        "char_vocab_size": 20, "dropout": 0.0,
    }

    def trace_types(self) -> frozenset[type]:
        c = self.config
        gated = CONV_BLOCKS[c.context_layer].has_gates(c.forget_gate, c.output_gate)
        return super().trace_types() | {Alignment, *([Gate] if gated else [])}

    def __init__(self, config: GCNNConfig):
        super().__init__(config)
        c = config
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings, use_pos=c.use_pos)
        self.char_composer = CharComposer(c) if c.use_chars else None
        self.token_input = nn.Identity()  # no parameters: marks the whole per-token input for attribution
        input_dim = self.features.output_dim + (c.char_hidden_size if c.use_chars else 0)
        self.dropout = nn.Dropout(c.dropout)
        self.context = ConvStack(input_dim, c.hidden_size, c.context_layers, c.kernel_width,
                                 c.context_layer, c.forget_gate, c.output_gate)
        self.aggregation = ConvStack(4 * c.hidden_size, c.hidden_size, c.aggregation_layers, c.kernel_width,
                                     c.context_layer, c.forget_gate, c.output_gate)
        self.classifier = nn.Sequential(
            nn.Linear(4 * c.hidden_size, c.mlp_hidden_size), nn.ReLU(), nn.Dropout(c.dropout),
            nn.Linear(c.mlp_hidden_size, c.num_classes))

    def embed(self, ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor,
              exact_match: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, C chars per word → [B, T, word (+ char) (+ POS)]
        x = self.features(ids, chars, pos, exact_match)
        if self.char_composer is not None:
            x = torch.cat([x, self.char_composer(chars)], dim=-1)
        return self.dropout(self.token_input(x))

    @property
    def token_representation(self) -> nn.Module:
        """Word vector (+ POS) and the char composer's vector together, as the context layers read them."""
        return self.token_input

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len, n hidden size, K classes
        pm, hm = batch.premise_mask, batch.hypothesis_mask
        a = self.embed(batch.premise_ids, batch.premise_chars, batch.premise_pos, batch.premise_exact_match)
        b = self.embed(batch.hypothesis_ids, batch.hypothesis_chars, batch.hypothesis_pos,
                       batch.hypothesis_exact_match)
        a_ctx, a_gates = self.context(a, pm)  # [B, P, n]  eq. 4
        b_ctx, b_gates = self.context(b, hm)  # [B, H, n]

        scores = torch.bmm(a_ctx, b_ctx.transpose(1, 2))  # e_ij  [B, P, H]  eq. 5
        a_to_b = masked_softmax(scores, hm.unsqueeze(1), dim=2)  # [B, P, H]  rows over hypothesis
        b_to_a = masked_softmax(scores.transpose(1, 2), pm.unsqueeze(1), dim=2)  # [B, H, P]
        alpha = torch.bmm(a_to_b, b_ctx)  # [B, P, n]  eq. 6
        beta = torch.bmm(b_to_a, a_ctx)  # [B, H, n]
        m_a = torch.cat([a_ctx, alpha, (a_ctx - alpha).abs(), a_ctx * alpha], dim=-1)  # [B, P, 4n]  eq. 7
        m_b = torch.cat([b_ctx, beta, (b_ctx - beta).abs(), b_ctx * beta], dim=-1)  # [B, H, 4n]

        v_a, a_agg_gates = self.aggregation(self.dropout(m_a), pm)  # [B, P, n]
        v_b, b_agg_gates = self.aggregation(self.dropout(m_b), hm)  # [B, H, n]
        v = torch.cat([masked_max(v_a, pm), masked_mean(v_a, pm),
                       masked_max(v_b, hm), masked_mean(v_b, hm)], dim=-1)  # [B, 4n]  eq. 8
        logits = self.classifier(self.dropout(v))  # [B, K]

        if trace is not None:
            self._trace_gates(trace, "context", 0, a_gates, b_gates)
            trace.add("attention_p→h", Alignment(a_to_b, rows="premise", cols="hypothesis", layer=1,
                                                 direction="p→h", kind="softmax"))
            trace.add("attention_h→p", Alignment(b_to_a, rows="hypothesis", cols="premise", layer=1,
                                                 direction="h→p", kind="softmax"))
            self._trace_gates(trace, "aggregation", len(a_gates), a_agg_gates, b_agg_gates)
            trace.add("pooled", Representation(v, name="pair"))
        return logits

    @staticmethod
    def _trace_gates(trace: Trace, stage: str, first_layer: int,
                     premise: list[dict[str, torch.Tensor]], hypothesis: list[dict[str, torch.Tensor]]) -> None:
        """Gate entries per layer, gate and sentence; layers are numbered 1.. across context then aggregation."""
        for sentence, layers in (("premise", premise), ("hypothesis", hypothesis)):
            for index, gates in enumerate(layers):
                layer = first_layer + index + 1
                for gate_name, values in gates.items():
                    trace.add(f"{stage}_layer{layer}_{sentence}_{gate_name}_gate",
                              Gate(values, tokens=sentence, layer=layer, name=gate_name))
