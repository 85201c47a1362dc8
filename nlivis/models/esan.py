"""ESAN: Enhanced Sentence Alignment Network with gated feature augmentation (Hu et al., 2020; papers/003).

Word features E (word + char-CNN + POS + exact match, §2.1) and contextual features H (a BiLSTM over E
with the same width d, §2.1) feed N stacked enhanced alignment layers with independent parameters.
Each layer (§2.2):
  1. gated feature augmentation (eqs. 1–3): ã = a + g_e∘E + g_h∘H with g_e = σ(W_g a + W_e E + z_e),
     g_h = σ(W_g a + W_h H + z_h); the first layer's input is H itself, so it adds E only.
     "simple" is eq. 4 (ã = a + E + H), "none" is plain co-attention between the layer inputs.
  2. co-attention (eqs. 5–7): e_ij = ReLU(W_c ã_i)·ReLU(W_c b̃_j), softmax over each side.
  3. fusion (eq. 8): ā = ReLU(W_f [ã; a'; ã − a'; ã∘a'] + z_f), the next layer's input.
Mean+max pooling of the last fusion outputs (eqs. 9–10), V = [V'_a; V'_b; V'_a − V'_b; V'_a∘V'_b]
(eq. 11) and a ReLU MLP (eq. 12).

Choices the paper leaves open, named here: W_c is d×d; the fusion weights are shared by both sentences
within a layer (the structure is "symmetric"); dropout (0.2) is applied to E and to the inputs of the
fusion and MLP layers. `hidden_size` = 0 keeps the paper's width d = width of E; any other value
projects E linearly to that width first (used for the reduced shipped size).

Parameters: with the Quora setting (GloVe 300 + char 100 = d 400, no POS/EM), 2 layers, 1 BiLSTM layer
and a 150-wide MLP this file counts 3.85M (configs/esan-quora.toml), against the paper's 3.9M (Table 5);
the NLI setting (d = 448 with POS and exact match, configs/esan.toml) gives 4.76M. See tests/test_models_esan.py for the measured numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.models.layers.masking import masked_max, masked_mean, masked_softmax
from nlivis.models.layers.recurrent import MaskedLSTM
from nlivis.models.registry import register
from nlivis.models.trace import Alignment, Gate, Representation, Trace



@dataclass
class ESANConfig(ModelConfig):
    num_layers: int = 2
    """Stacked enhanced alignment layers (paper: tuned 2–3; 2 matches its 3.9M parameter count)."""
    augmentation: str = "gated"
    """"gated" (eqs. 1–3), "simple" (eq. 4, Table 4 "w/ Simple Augment.") or "none" (Table 4
    "w/o Feat. Augment.": co-attention between the intermediate representations only)."""
    use_word_features: bool = True
    """Augment with the word features E. False is Table 4 "w/o Word Feat."."""
    use_contextual_features: bool = True
    """Augment with the contextual features H (layers 2..N). False is Table 4 "w/o Contextual Feat."."""
    hidden_size: int = 0
    """Model width d. 0 = the width of the token features, as in the paper (E and H share width d);
    another value projects E to it. The BiLSTM has d/2 units per direction, so d must be even."""
    encoder_layers: int = 1
    """BiLSTM layers of the contextual encoder (paper: tuned 1–2)."""
    mlp_hidden_size: int = 150
    """Hidden width of the MLP (paper: tuned 150–300; 150 matches its parameter count)."""
    use_chars: bool = True
    """Char-CNN word vectors (paper: kernel 5, 100 filters, 16 chars per word)."""
    char_dim: int = 8
    """Char embedding width (not stated; 8 as in DIIN, whose features ESAN follows)."""
    char_filters: int = 100
    """Char-CNN filters (paper: 100)."""
    char_width: int = 5
    """Char-CNN kernel width (paper: 5)."""
    use_pos: bool = True
    """47-d POS one-hot (paper: NLI only, following Chen et al. 2018)."""
    use_exact_match: bool = True
    """Binary exact-match flag (paper: NLI only)."""
    dropout: float = 0.2
    """Dropout rate (paper: 0.2)."""


class AlignmentLayer(nn.Module):
    """One enhanced sentence alignment layer: augmentation → co-attention → fusion (§2.2). This base class
    augments nothing (Table 4 "w/o Feat. Augment."); its subclasses in AUGMENTATIONS are the other kinds of
    augmentation, chosen by name (the `augmentation` option)."""

    has_gates: ClassVar[bool] = False
    """Whether its augmentation has gates to trace (as `Gate` entries)."""

    def __init__(self, dim: int, first: bool, use_word: bool, use_context: bool, dropout: nn.Dropout):
        super().__init__()
        self.adds_word = use_word  # what an augmenting subclass adds: E ...
        self.adds_context = use_context and not first  # ... and H, except in layer 1, whose input already is H
        self.add_augmentation_weights(dim)  # before W_c and W_f: their initial values follow from the seed as before
        self.w_c = nn.Linear(dim, dim, bias=False)  # eq. 5
        self.w_f = nn.Linear(4 * dim, dim)  # W_f and z_f  eq. 8
        self.dropout = dropout

    def add_augmentation_weights(self, dim: int) -> None:
        """The augmentation's own weights, if any."""

    def augment(self, a: torch.Tensor, e: torch.Tensor, h: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """ã from the layer input a and the features E, H; returns ã [B, T, d] and the gates. Here ã = a."""
        return a, {}

    def forward(self, a: torch.Tensor, b: torch.Tensor, features_a: tuple[torch.Tensor, torch.Tensor],
                features_b: tuple[torch.Tensor, torch.Tensor], mask_a: torch.Tensor, mask_b: torch.Tensor):
        # B batch, P / H lengths of a / b, d width
        a_tilde, gates_a = self.augment(a, *features_a)  # [B, P, d]
        b_tilde, gates_b = self.augment(b, *features_b)  # [B, H, d]
        scores = torch.bmm(torch.relu(self.w_c(a_tilde)), torch.relu(self.w_c(b_tilde)).transpose(1, 2))  # [B, P, H]
        a_to_b = masked_softmax(scores, mask_b.unsqueeze(1), dim=2)  # eq. 6 weights  [B, P, H]
        b_to_a = masked_softmax(scores.transpose(1, 2), mask_a.unsqueeze(1), dim=2)  # eq. 7 weights  [B, H, P]
        a_aligned = torch.bmm(a_to_b, b_tilde)  # a'  [B, P, d]
        b_aligned = torch.bmm(b_to_a, a_tilde)  # b'  [B, H, d]
        a_bar = self.fuse(a_tilde, a_aligned, mask_a)
        b_bar = self.fuse(b_tilde, b_aligned, mask_b)
        return a_bar, b_bar, (a_to_b, b_to_a), (gates_a, gates_b)

    def fuse(self, x: torch.Tensor, aligned: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Eq. 8, with padding kept at zero."""
        # B batch, T tokens, d width → [B, T, d]
        joined = torch.cat([x, aligned, x - aligned, x * aligned], dim=-1)
        out = torch.relu(self.w_f(self.dropout(joined)))
        return out * mask.unsqueeze(-1).to(out.dtype)


class SimpleAugmentation(AlignmentLayer):
    """Eq. 4 (Table 4 "w/ Simple Augment."): ã = a + E + H, without gates."""

    def augment(self, a: torch.Tensor, e: torch.Tensor, h: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        # B batch, T tokens, d width
        out = a
        if self.adds_word:
            out = out + e  # [B, T, d]
        if self.adds_context:
            out = out + h  # [B, T, d]
        return out, {}


class GatedAugmentation(AlignmentLayer):
    """Eqs. 1–3 (the paper's model): ã = a + g_e∘E + g_h∘H, each gate read from the layer input a through a
    shared W_g and from its own features."""

    has_gates = True

    def add_augmentation_weights(self, dim: int) -> None:
        self.w_g = nn.Linear(dim, dim, bias=False) if self.adds_word or self.adds_context else None
        self.w_e = nn.Linear(dim, dim) if self.adds_word else None  # W_e and z_e  eq. 1
        self.w_h = nn.Linear(dim, dim) if self.adds_context else None  # W_h and z_h  eq. 2

    def augment(self, a: torch.Tensor, e: torch.Tensor, h: torch.Tensor
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        # B batch, T tokens, d width
        gates: dict[str, torch.Tensor] = {}
        out = a
        shared = self.w_g(a) if self.w_g is not None else None  # W_g a_i  [B, T, d]
        if self.w_e is not None:
            gates["word"] = torch.sigmoid(shared + self.w_e(e))  # [B, T, d]  eq. 1
            out = out + gates["word"] * e
        if self.w_h is not None:
            gates["context"] = torch.sigmoid(shared + self.w_h(h))  # [B, T, d]  eq. 2
            out = out + gates["context"] * h
        return out, gates  # eq. 3


AUGMENTATIONS: dict[str, type[AlignmentLayer]] = {
    "gated": GatedAugmentation, "simple": SimpleAugmentation, "none": AlignmentLayer}
"""The `augmentation` option → the alignment layer that augments so (RE2-style: a part chosen by name)."""


@register("esan")
class ESAN(MatchingModel):
    """Word + contextual features, N enhanced alignment layers, mean+max pooling, MLP; see the module docstring."""

    config_class = ESANConfig
    max_inference_batch: ClassVar[int] = 64
    """Measured (bench/results/eval-batch-*.md): 1.43× less time per pair than 256 at the shipped size (paper
    size: flat within 6%)."""
    tiny_overrides: ClassVar[dict] = {"hidden_size": 8, "mlp_hidden_size": 6, "char_dim": 4, "char_filters": 5,
                                      "char_width": 3, "word_dim": 10, "vocab_size": 30, "char_vocab_size": 20,
                                      "dropout": 0.0}

    def trace_types(self) -> frozenset[type]:
        c = self.config
        gated = AUGMENTATIONS[c.augmentation].has_gates and (c.use_word_features or c.use_contextual_features)
        return super().trace_types() | {Alignment, *([Gate] if gated else [])}

    def __init__(self, config: ESANConfig):
        super().__init__(config)
        c = config
        if c.augmentation not in AUGMENTATIONS:
            raise ValueError(f"augmentation must be one of {tuple(AUGMENTATIONS)}, got {c.augmentation!r}")
        if c.num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {c.num_layers}")
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings, use_chars=c.use_chars,
                                      char_vocab_size=c.char_vocab_size, char_dim=c.char_dim,
                                      char_filters=c.char_filters, char_width=c.char_width, use_pos=c.use_pos,
                                      use_exact_match=c.use_exact_match)
        d = c.hidden_size or self.features.output_dim
        if d % 2:
            raise ValueError(f"ESAN width d = {d} must be even (the BiLSTM gives d/2 per direction); "
                             "set hidden_size to an even width")
        self.projection = nn.Linear(self.features.output_dim, d) if c.hidden_size else None
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = MaskedLSTM(d, d // 2, num_layers=c.encoder_layers, dropout=c.dropout)
        self.layers = nn.ModuleList(
            AUGMENTATIONS[c.augmentation](d, index == 0, c.use_word_features, c.use_contextual_features,
                                          self.dropout)
            for index in range(c.num_layers))
        self.classifier = nn.Sequential(nn.Linear(8 * d, c.mlp_hidden_size), nn.ReLU(), nn.Dropout(c.dropout),
                                        nn.Linear(c.mlp_hidden_size, c.num_classes))

    def word_features(self, ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor,
                      exact_match: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """E [B, T, d], zero on padding."""
        x = self.features(ids, chars, pos, exact_match)
        if self.projection is not None:
            x = self.projection(x)
        return self.dropout(x) * mask.unsqueeze(-1).to(x.dtype)

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len, d width, K classes
        pm, hm = batch.premise_mask, batch.hypothesis_mask
        e_p = self.word_features(batch.premise_ids, batch.premise_chars, batch.premise_pos,
                                 batch.premise_exact_match, pm)  # E_a  [B, P, d]
        e_h = self.word_features(batch.hypothesis_ids, batch.hypothesis_chars, batch.hypothesis_pos,
                                 batch.hypothesis_exact_match, hm)  # E_b  [B, H, d]
        c_p, c_h = self.encoder.forward_pair(e_p, pm, e_h, hm)  # H_a [B, P, d], H_b [B, H, d]

        a, b = c_p, c_h  # the first alignment layer reads the encoding outputs
        for index, layer in enumerate(self.layers, start=1):
            a, b, (a_to_b, b_to_a), (gates_p, gates_h) = layer(a, b, (e_p, c_p), (e_h, c_h), pm, hm)
            if trace is not None:
                trace.add(f"layer{index}_attention_p→h", Alignment(a_to_b, rows="premise", cols="hypothesis",
                                                                   layer=index, direction="p→h", kind="softmax"))
                trace.add(f"layer{index}_attention_h→p", Alignment(b_to_a, rows="hypothesis", cols="premise",
                                                                   layer=index, direction="h→p", kind="softmax"))
                for sentence, gates in (("premise", gates_p), ("hypothesis", gates_h)):
                    for kind, values in gates.items():
                        trace.add(f"layer{index}_{kind}_gate_{sentence}",
                                  Gate(values, tokens=sentence, layer=index, name=f"augment_{kind}"))

        v_a = torch.cat([masked_mean(a, pm), masked_max(a, pm)], dim=-1)  # V'_a  [B, 2d]  eq. 9
        v_b = torch.cat([masked_mean(b, hm), masked_max(b, hm)], dim=-1)  # V'_b  [B, 2d]  eq. 10
        v = torch.cat([v_a, v_b, v_a - v_b, v_a * v_b], dim=-1)  # [B, 8d]  eq. 11
        logits = self.classifier(self.dropout(v))  # [B, K]  eq. 12
        if trace is not None:
            trace.add("pooled", Representation(v, name="pair"))
        return logits
