"""AttentiveConvNet (Yin & Schütze, TACL 2018; papers/002) for sentence pairs.

Seven layers: embedding, attentive convolution, max-pooling, composition [r^x; r^y; r^x ∘ r^y],
hidden 1, hidden 2 and logistic regression over [composition; hidden 1; hidden 2].

Attentive convolution (eq. 6): h_i' = tanh(W¹·[b_{i−1}, b_i, b_{i+1}] + W²·c_i + b), a width-3
convolution over the beneficiary b plus a width-1 convolution over the attentive context c, where
c_i = Σ_j softmax_j(e(s_i, f_j)) f_j (eq. 4) with the energy e = dot (eq. 1), bilinear (eq. 2) or
additive (eq. 3).

- "light" (Fig. 1a): source s, focus f and beneficiary b are the word vectors themselves.
- "advanced" (Fig. 1b): s = f_mgran(H^x), f = f_mgran(H^a) = [uni-gram gated conv; tri-gram gated conv]
  (eqs. 10–12) and b = f_bene(H^x) = uni-gram gated conv (eq. 13); a gated conv is
  g∘u + (1−g)∘tanh(W_h i + b_h) with g = σ(W_g i + b_g) (eqs. 7–9).

The setup is two-way and Siamese up to max-pooling: the premise attends over the hypothesis and the
hypothesis over the premise with the same weights. "intra" attention sets t^a = t^x; "inter_and_intra"
adds the intra context as a second width-1 convolution to the same sum (the paper's
"advanced&intra-attention"). Choices the paper leaves open, named here: f_mgran is one function used
for source and focus (the paper uses "the same architecture"; sharing also keeps the intra case
consistent), the inter and intra attention share one energy function, "no gate" (Table 4) keeps only
the tanh transform of eq. 7, and the hidden layers use tanh (as the authors' code).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.layers.conv import TokenConv, conv_tokens
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.models.layers.masking import masked_max, masked_softmax, zero_padding
from nlivis.models.registry import register
from nlivis.models.trace import Alignment, Gate, Representation, Trace

VERSIONS = ("light", "advanced")
ATTENTIONS = ("inter", "intra", "inter_and_intra")


@dataclass
class AttentiveConvConfig(ModelConfig):
    version: str = "advanced"
    """"light" (source = focus = beneficiary = the word vectors) or "advanced" (f_mgran/f_bene gated convs).
    The paper's main single-model SNLI rows are light 86.3, advanced 87.8, advanced&intra 88.4."""
    attention: str = "inter"
    """"inter" (attend over the other sentence), "intra" (t^a = t^x) or "inter_and_intra" (both contexts)."""
    matching: str = "dot"
    """Energy function e_ij: "dot" (eq. 1, as the authors' code), "bilinear" (eq. 2) or "additive" (eq. 3)."""
    hidden_size: int = 300
    """Width of the attentive convolution and both hidden layers (paper: 300)."""
    filter_width: int = 3
    """Width of the convolution over the beneficiary (paper: 3); the context convolution is always width 1."""
    use_unigram: bool = True
    """Advanced only: uni-gram gated conv in f_mgran. False is Table 4's "w/o uni-hidden"."""
    use_trigram: bool = True
    """Advanced only: tri-gram gated conv in f_mgran. False is Table 4's "w/o tri-hidden"."""
    use_gate: bool = True
    """Advanced only: gates of eqs. 8–9 in source, focus and beneficiary. False is Table 4's "w/o gate"."""
    dropout: float = 0.1
    """Dropout on the output of each layer (paper: 0.1)."""


class GatedConv(nn.Module):
    """f_gconv (eqs. 7–9) over windows of `width` tokens: g∘u + (1−g)∘tanh(W_h i + b_h), u the centre token.

    Without the gate it is tanh(W_h i + b_h) alone. Padding is zeroed before the convolution. Both
    convolutions are `nn.Conv1d` parameters applied to one shared prepared input (layers/conv.py).
    """

    def __init__(self, dim: int, width: int, use_gate: bool):
        super().__init__()
        self.transform = nn.Conv1d(dim, dim, width, padding=width // 2)
        self.gate = nn.Conv1d(dim, dim, width, padding=width // 2) if use_gate else None

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        # B batch, T tokens, d width; returns the output [B, T, d] and the gate [B, T, d] (None without gates)
        h = zero_padding(h, mask)
        x = TokenConv.for_conv(h, self.transform)  # shared by transform and gate
        candidate = torch.tanh(x(self.transform))  # ō  [B, T, d]  eq. 7
        if self.gate is None:
            return zero_padding(candidate, mask), None
        g = torch.sigmoid(x(self.gate))  # eq. 8
        return zero_padding(g * h + (1.0 - g) * candidate, mask), g  # eq. 9


class DotEnergy(nn.Module):
    """Matching scores e_ij between source rows [B, R, s] and focus columns [B, C, s] → [B, R, C]: the dot
    product (eq. 1). The other matchings of ENERGIES share this interface."""

    def __init__(self, dim: int):
        super().__init__()

    def forward(self, source: torch.Tensor, focus: torch.Tensor) -> torch.Tensor:
        # B batch, R source len, C focus len, s width
        return torch.bmm(source, focus.transpose(1, 2))  # [B, R, C]  eq. 1


class BilinearEnergy(DotEnergy):
    """e_ij = s_i^T W_e f_j (eq. 2)."""

    def __init__(self, dim: int):
        super().__init__(dim)
        self.w = nn.Linear(dim, dim, bias=False)  # W_e  eq. 2

    def forward(self, source: torch.Tensor, focus: torch.Tensor) -> torch.Tensor:
        return torch.bmm(self.w(source), focus.transpose(1, 2))  # [B, R, C]  eq. 2


class AdditiveEnergy(DotEnergy):
    """e_ij = v_e^T tanh(W_e s_i + U_e f_j) (eq. 3)."""

    def __init__(self, dim: int):
        super().__init__(dim)
        self.w = nn.Linear(dim, dim, bias=False)  # W_e  eq. 3
        self.u = nn.Linear(dim, dim, bias=False)  # U_e
        self.v = nn.Linear(dim, 1, bias=False)  # v_e

    def forward(self, source: torch.Tensor, focus: torch.Tensor) -> torch.Tensor:
        summed = self.w(source).unsqueeze(2) + self.u(focus).unsqueeze(1)  # [B, R, C, s]
        return self.v(torch.tanh(summed)).squeeze(-1)  # [B, R, C]  eq. 3


ENERGIES: dict[str, type[DotEnergy]] = {"dot": DotEnergy, "bilinear": BilinearEnergy, "additive": AdditiveEnergy}
"""The `matching` option → the energy function (RE2-style: a part chosen by name)."""


@register("attentive_conv")
class AttentiveConvNet(MatchingModel):
    """Two-way attentive convolution, max-pooling, composition and two hidden layers; see the module docstring."""

    config_class = AttentiveConvConfig
    max_inference_batch: ClassVar[int] = 64
    """Measured (bench/results/eval-batch-*.md): 1.27× less time per pair than 256 at the shipped size (paper
    size: flat within 2%)."""
    tiny_overrides: ClassVar[dict] = {"hidden_size": 8, "word_dim": 10, "vocab_size": 30, "char_vocab_size": 20,
                                      "dropout": 0.0}

    def trace_types(self) -> frozenset[type]:
        gated = self.config.version == "advanced" and self.config.use_gate
        return super().trace_types() | {Alignment, *([Gate] if gated else [])}

    def __init__(self, config: AttentiveConvConfig):
        super().__init__(config)
        c = config
        if c.version not in VERSIONS:
            raise ValueError(f"version must be one of {VERSIONS}, got {c.version!r}")
        if c.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {c.attention!r}")
        if c.version == "advanced" and not (c.use_unigram or c.use_trigram):
            raise ValueError("the advanced version needs use_unigram or use_trigram (f_mgran would be empty)")
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings)
        self.dropout = nn.Dropout(c.dropout)
        d = c.word_dim
        self.advanced = c.version == "advanced"
        if self.advanced:
            self.mgran_uni = GatedConv(d, 1, c.use_gate) if c.use_unigram else None  # eq. 10
            self.mgran_tri = GatedConv(d, 3, c.use_gate) if c.use_trigram else None  # eq. 11
            self.beneficiary = GatedConv(d, 1, c.use_gate)  # f_bene  eq. 13
            source_dim = d * (int(c.use_unigram) + int(c.use_trigram))
        else:
            source_dim = d
        self.uses_inter = c.attention in ("inter", "inter_and_intra")
        self.uses_intra = c.attention in ("intra", "inter_and_intra")
        if c.matching not in ENERGIES:
            raise ValueError(f"matching must be one of {tuple(ENERGIES)}, got {c.matching!r}")
        self.energy = ENERGIES[c.matching](source_dim)
        n = c.hidden_size
        self.local_conv = nn.Conv1d(d, n, c.filter_width, padding=c.filter_width // 2)  # W¹ and b  eq. 6
        self.inter_context_conv = nn.Linear(source_dim, n, bias=False) if self.uses_inter else None  # W²
        self.intra_context_conv = nn.Linear(source_dim, n, bias=False) if self.uses_intra else None
        self.hidden1 = nn.Linear(3 * n, n)
        self.hidden2 = nn.Linear(n, n)
        self.output = nn.Linear(5 * n, c.num_classes)

    def multi_granular(self, h: torch.Tensor, mask: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """Attention source/focus and beneficiary of one sentence, with the gates that made them."""
        # B batch, T tokens, d word width; returns [B, T, s], [B, T, d] and gates name → [B, T, d]
        if not self.advanced:
            return h, h, {}
        parts, gates = [], {}
        for name, conv in (("uni", self.mgran_uni), ("tri", self.mgran_tri)):
            if conv is not None:
                out, gate = conv(h, mask)
                parts.append(self.dropout(out))
                if gate is not None:
                    gates[f"mgran_gate_{name}"] = gate
        beneficiary, gate = self.beneficiary(h, mask)
        if gate is not None:
            gates["bene_gate"] = gate
        return torch.cat(parts, dim=-1), self.dropout(beneficiary), gates  # eq. 12

    def attend(self, source: torch.Tensor, focus: torch.Tensor, focus_mask: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention weights over the focus tokens and the attentive context (eq. 4)."""
        # B batch, R rows, C focus len, s width; returns [B, R, C] and [B, R, s]
        weights = masked_softmax(self.energy(source, focus), focus_mask.unsqueeze(1), dim=2)
        return weights, torch.bmm(weights, focus)

    def convolve(self, beneficiary: torch.Tensor, mask: torch.Tensor, inter: torch.Tensor | None,
                 intra: torch.Tensor | None) -> torch.Tensor:
        """Attentive convolution (eq. 6), then masked max-pooling → r [B, n]."""
        # B batch, T tokens, d width, s source width, n hidden size
        total = conv_tokens(zero_padding(beneficiary, mask), self.local_conv)  # [B, T, n]
        if inter is not None:
            total = total + self.inter_context_conv(inter)
        if intra is not None:
            total = total + self.intra_context_conv(intra)
        return masked_max(self.dropout(torch.tanh(total)), mask)

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len, d word width, s source width, n hidden size, K classes
        pm, hm = batch.premise_mask, batch.hypothesis_mask
        p, h = (self.dropout(side) for side in self.features.sides(batch))  # [B, P, d], [B, H, d]
        p_source, p_bene, p_gates = self.multi_granular(p, pm)  # [B, P, s], [B, P, d]
        h_source, h_bene, h_gates = self.multi_granular(h, hm)  # [B, H, s], [B, H, d]

        attention: dict[str, torch.Tensor] = {}
        p_inter = h_inter = p_intra = h_intra = None
        if self.uses_inter:
            attention["p→h"], p_inter = self.attend(p_source, h_source, hm)  # [B, P, H], [B, P, s]
            attention["h→p"], h_inter = self.attend(h_source, p_source, pm)  # [B, H, P], [B, H, s]
        if self.uses_intra:
            attention["p→p"], p_intra = self.attend(p_source, p_source, pm)  # [B, P, P], [B, P, s]
            attention["h→h"], h_intra = self.attend(h_source, h_source, hm)  # [B, H, H], [B, H, s]
        r_p = self.convolve(p_bene, pm, p_inter, p_intra)  # r^x  [B, n]
        r_h = self.convolve(h_bene, hm, h_inter, h_intra)  # r^y  [B, n]

        composition = torch.cat([r_p, r_h, r_p * r_h], dim=-1)  # [B, 3n]
        hidden1 = self.dropout(torch.tanh(self.hidden1(composition)))  # [B, n]
        hidden2 = self.dropout(torch.tanh(self.hidden2(hidden1)))  # [B, n]
        features = torch.cat([composition, hidden1, hidden2], dim=-1)  # [B, 5n]
        logits = self.output(features)  # [B, K]

        if trace is not None:
            for sentence, gates in (("premise", p_gates), ("hypothesis", h_gates)):
                for name, values in gates.items():
                    trace.add(f"{name}_{sentence}", Gate(values, tokens=sentence, layer=1, name=name))
            sentences = {"p": "premise", "h": "hypothesis"}
            for direction, weights in attention.items():
                rows, cols = sentences[direction[0]], sentences[direction[-1]]
                trace.add(f"attention_{direction}", Alignment(weights, rows=rows, cols=cols, layer=1,
                                                              direction=direction, kind="softmax"))
            trace.add("pooled", Representation(features, name="pair"))
        return logits
