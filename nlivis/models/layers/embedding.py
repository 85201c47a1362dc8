"""Token features shared by the models: word embedding, optional char-CNN, POS one-hot, exact match.

DIIN's embedding layer concatenates all four (300 + 100 + 47 + 1 = 448 with GloVe); GCNN and ESAN use
subsets; AttentiveConvNet and AMN use words only. Which parts are on is each model's config.
"""
from __future__ import annotations

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.features.pos import NUM_POS_TAGS
from nlivis.models.layers.conv import conv_tokens


class CharCNN(nn.Module):
    """Char embedding → 1-D conv over the characters of each word → ReLU → max over characters.

    Sizes follow the DIIN code (char_emb 8, 100 filters, width 5); two details do not. The conv pads
    "same" (width // 2 zeros on each side), where the code's is VALID over the 16-char buffer; and
    padding characters are masked out of the max, where the code max-pools over every window of the
    buffer, pads included (so there a word's vector depends on how far it is padded). Padding words
    (all-zero chars) give a zero vector.
    """

    def __init__(self, char_vocab_size: int, char_dim: int = 8, filters: int = 100, width: int = 5):
        super().__init__()
        self.embedding = nn.Embedding(char_vocab_size, char_dim, padding_idx=0)
        self.conv = nn.Conv1d(char_dim, filters, kernel_size=width, padding=width // 2)
        self.output_dim = filters

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, C chars per word, e char dim, F filters
        b, t, c = chars.shape
        x = self.embedding(chars.view(b * t, c))  # [B·T, C, e]
        y = torch.relu(conv_tokens(x, self.conv))  # [B·T, C, F]  (the Conv1d as a window product)
        char_mask = (chars.view(b * t, c, 1) != 0)
        y = y.masked_fill(~char_mask, 0.0)  # ReLU output ≥ 0, so 0 is neutral for the max
        return y.max(dim=1).values.view(b, t, -1)  # [B, T, F]


class TokenFeatures(nn.Module):
    """[B, T] token ids (+ chars, POS, exact match) → [B, T, output_dim] features.

    `word_embedding` holds the vocabulary rows; it is frozen when `freeze_words` (pretrained vectors
    shared between checkpoints), trainable otherwise.
    """

    def __init__(
        self,
        vocab_size: int,
        word_dim: int,
        freeze_words: bool,
        use_chars: bool = False,
        char_vocab_size: int = 100,
        char_dim: int = 8,
        char_filters: int = 100,
        char_width: int = 5,
        use_pos: bool = False,
        use_exact_match: bool = False,
    ):
        super().__init__()
        self.word_embedding = nn.Embedding(vocab_size, word_dim, padding_idx=0)
        self.word_embedding.weight.requires_grad_(not freeze_words)
        self.chars = CharCNN(char_vocab_size, char_dim, char_filters, char_width) if use_chars else None
        self.use_pos = use_pos
        self.use_exact_match = use_exact_match
        self.output_dim = (word_dim + (char_filters if use_chars else 0)
                           + (NUM_POS_TAGS if use_pos else 0) + (1 if use_exact_match else 0))

    def forward(self, ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor,
                exact_match: torch.Tensor) -> torch.Tensor:
        # B batch, T tokens, C chars per word
        parts = [self.word_embedding(ids)]
        if self.chars is not None:
            parts.append(self.chars(chars))
        if self.use_pos:
            parts.append(nn.functional.one_hot(pos, NUM_POS_TAGS).to(parts[0].dtype))
        if self.use_exact_match:
            parts.append(exact_match.unsqueeze(-1).to(parts[0].dtype))
        return torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]

    def sides(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The features of `batch`'s premises [B, P, output_dim] and hypotheses [B, H, output_dim], in that order:
        what a model's `match` starts from."""
        return (self(batch.premise_ids, batch.premise_chars, batch.premise_pos, batch.premise_exact_match),
                self(batch.hypothesis_ids, batch.hypothesis_chars, batch.hypothesis_pos, batch.hypothesis_exact_match))
