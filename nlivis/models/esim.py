"""ESIM: Enhanced Sequential Inference Model (Chen et al., ACL 2017), the baseline the papers compare with.

Input encoding with a BiLSTM, soft alignment by dot products (ã = Σ softmax(e_ij) b̄_j and the
reverse), local inference enhancement m = [ā; ã; ā − ã; ā ∘ ã], the paper's one-layer ReLU feed-forward F
projecting m back to the hidden width (keeps the composition LSTM small), a composition
BiLSTM, average and max pooling of both sentences, and an MLP with one tanh hidden layer.
Only the sequential (non-tree) ESIM is implemented; word embeddings only.
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
from nlivis.models.trace import Alignment, Representation, Trace


@dataclass
class ESIMConfig(ModelConfig):
    hidden_size: int = 300
    """Width of each LSTM direction, of the projection layer and of the MLP hidden layer (paper: 300)."""
    dropout: float = 0.5
    """Dropout on the embeddings, the enhanced vectors and the MLP (paper: 0.5)."""


@register("esim")
class ESIM(MatchingModel):
    """BiLSTM encoding → soft alignment → enhancement → projection → BiLSTM composition → avg+max → MLP."""

    config_class = ESIMConfig
    tiny_overrides: ClassVar[dict] = {"hidden_size": 6, "word_dim": 10, "vocab_size": 30, "char_vocab_size": 20,
                                      "dropout": 0.0}

    def trace_types(self) -> frozenset[type]:
        return super().trace_types() | {Alignment}

    def __init__(self, config: ESIMConfig):
        super().__init__(config)
        c = config
        n = c.hidden_size
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings)
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = MaskedLSTM(c.word_dim, n)
        self.projection = nn.Sequential(nn.Linear(8 * n, n), nn.ReLU())
        self.composition = MaskedLSTM(n, n)
        self.classifier = nn.Sequential(nn.Linear(8 * n, n), nn.Tanh(), nn.Dropout(c.dropout),
                                        nn.Linear(n, c.num_classes))

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len, n hidden size (2n per BiLSTM state), K classes
        pm, hm = batch.premise_mask, batch.hypothesis_mask
        a, b = (self.dropout(side) for side in self.features.sides(batch))  # [B, P, d], [B, H, d]
        a_bar, b_bar = self.encoder.forward_pair(a, pm, b, hm)  # [B, P, 2n], [B, H, 2n]

        scores = torch.bmm(a_bar, b_bar.transpose(1, 2))  # e_ij  [B, P, H]
        a_to_b = masked_softmax(scores, hm.unsqueeze(1), dim=2)  # [B, P, H]
        b_to_a = masked_softmax(scores.transpose(1, 2), pm.unsqueeze(1), dim=2)  # [B, H, P]
        a_tilde = torch.bmm(a_to_b, b_bar)  # [B, P, 2n]
        b_tilde = torch.bmm(b_to_a, a_bar)  # [B, H, 2n]
        m_a = torch.cat([a_bar, a_tilde, a_bar - a_tilde, a_bar * a_tilde], dim=-1)  # [B, P, 8n]
        m_b = torch.cat([b_bar, b_tilde, b_bar - b_tilde, b_bar * b_tilde], dim=-1)  # [B, H, 8n]

        v_a, v_b = self.composition.forward_pair(self.projection(self.dropout(m_a)), pm,
                                                 self.projection(self.dropout(m_b)), hm)  # [B, P, 2n], [B, H, 2n]
        v = torch.cat([masked_mean(v_a, pm), masked_max(v_a, pm),
                       masked_mean(v_b, hm), masked_max(v_b, hm)], dim=-1)  # [B, 8n]
        logits = self.classifier(self.dropout(v))  # [B, K]

        if trace is not None:
            trace.add("attention_p→h", Alignment(a_to_b, rows="premise", cols="hypothesis", layer=1,
                                                 direction="p→h", kind="softmax"))
            trace.add("attention_h→p", Alignment(b_to_a, rows="hypothesis", cols="premise", layer=1,
                                                 direction="h→p", kind="softmax"))
            trace.add("pooled", Representation(v, name="pair"))
        return logits
