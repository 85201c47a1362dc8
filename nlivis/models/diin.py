"""DIIN: Densely Interactive Inference Network (Gong et al., ICLR 2018; papers/001).

Five stages (§3.2):
  1. Embedding: word + char-CNN + 47-d POS one-hot + binary exact match (300 + 100 + 47 + 1 = 448).
  2. Encoding: a two-layer highway network shared by premise and hypothesis, then per sentence a
     self-attention with the tri-linear score A_ij = w·[a_i; a_j; a_i∘a_j] (eqs. 1–2) and a fuse gate
     (eqs. 3–6). Premise and hypothesis have their own self-attention and fuse gate, tied by an L2
     penalty on the difference of their weights (`regularization_terms()["encoder_difference"]`,
     weighted by the trainer's `encoder_difference_weight`, 1e-3 in the paper).
  3. Interaction: I_ij = p_i ∘ h_j, a d-channel p×h "image" (eq. 7).
  4. Feature extraction: 1×1 conv scale-down to floor(d·FSDR) channels without ReLU, then three
     DenseNet blocks (n 3×3 conv+ReLU layers, growth rate GR, concatenated) each followed by a
     transition (1×1 conv to floor(c·TSDR) channels, no activation, 2×2 max-pool stride 2).
  5. Output: a linear layer over the flattened maps.

The grid is fixed: every sentence is right-padded to `sequence_length` tokens (the paper's hard
cut-off: 48 MultiNLI, 32 SNLI, 24 Quora), as the official code does, so the flattened feature maps
always have the same size. Because every padded position sees the same input, a pair's logits do not
depend on how far its batch was padded, even with the unmasked interaction.

Choices and switches (each named in `DIINConfig`):
- The fuse gate as printed in papers/001 (eqs. 3–6) has two independent gates, P_enc = r∘P_hw + f∘z,
  which is also the official code's default (`two_gate_fuse_gate`) and the only form that reproduces
  the paper's 4.36M parameters. The often-quoted one-gate form f∘P_hw + (1−f)∘z is `fuse = "one_gate"`.
- Table 5 rows 2–7: `feature_extractor = "none"` (encoding-based: max-pool over time and
  [p; h; |p−h|; p∘h]), `encoding = "none"`, `encoding = "highway_only"`, `fuse = "none"`,
  `fuse = "addition"`, `interaction = "similarity"` (a one-channel dot-product matrix).
- `mask_interaction`: the paper does not say; the official code computes the mask and discards it, so
  cells of padded tokens carry enc(pad)∘enc(word). True (default) zeroes them.
- `model_dim` (Table 6): the highway variant of eqs. 9–12 projects the embedding to d ≠ 448 in its first
  layer. `highway_activation` is "relu" as in the official code (eq. 9 of the variant says tanh).
- Eq. 2 as printed divides exp(A_ij) by Σ_k exp(A_kj), a softmax over the first index; the official code
  (`softsel`) and this file normalise over j instead, so each token's weights over the sentence sum to 1.
- Dropout sits on the embedding, on the input of every highway layer, of the self-attention scores and of
  the fuse gates, on the interaction tensor (before the 1×1 scale-down) and before the output layer; the
  dense blocks and the transitions' 1×1 convolutions get none. Its rate starts at `dropout` and the
  trainer's keep-rate schedule decays it.
- Trace: each `dense_block_N` entry holds only the n·GR channels that block adds; the channels it carries
  in from before (the scale-down's or the previous transition's) are traced under their own stage.

Parameters (word embeddings excluded; tests/test_models_diin.py measures them): 4.37M at d = 448 with
the two-gate fuse (paper, Table 6: 4.36M; the ~0.01M gap is the char CNN and its embedding, which the
paper may not count); 3.56M with the one-gate fuse.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.models.layers.masking import masked_max, masked_softmax
from nlivis.models.registry import register
from nlivis.models.trace import Alignment, FeatureMaps, Gate, Representation, Trace

ENCODINGS = ("self_attention", "highway_only", "none")
HIGHWAY_ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


@dataclass(frozen=True)
class Interaction:
    """How I is built from the encoded sentences P_enc, H_enc [B, L, d] (stage 3)."""

    build: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    """(P_enc, H_enc) → I [B, C, L, L]."""
    one_channel: bool
    """C = 1 (a similarity matrix, also traced as an `Alignment`) rather than C = d."""


INTERACTIONS: dict[str, Interaction] = {
    "dense": Interaction(lambda p, h: torch.einsum("bid,bjd->bdij", p, h), one_channel=False),  # I_ij = p_i∘h_j  eq. 7
    "similarity": Interaction(lambda p, h: torch.bmm(p, h.transpose(1, 2)).unsqueeze(1), one_channel=True),  # p_i·h_j
}
"""The `interaction` option → how I is built (RE2-style: a part chosen by name)."""


@dataclass
class DIINConfig(ModelConfig):
    sequence_length: int = 48
    """Fixed grid size: sentences are padded to it and may not be longer (paper: 48 MultiNLI, 32 SNLI,
    24 Quora). Must be divisible by 2 ** dense_blocks for the transitions' pooling to tile it."""
    model_dim: int = 0
    """Width d of the encoder and channels of I. 0 = the embedding width (448 with GloVe); another value
    makes the first highway layer project to it (Table 6's variant, eqs. 9–12)."""
    use_chars: bool = True
    """Char-CNN word vectors (official code: 8-d chars, 100 filters of width 5, max over characters)."""
    char_dim: int = 8
    """Char embedding width (official code: 8)."""
    char_filters: int = 100
    """Char-CNN filters (official code: 100)."""
    char_width: int = 5
    """Char-CNN kernel width (official code: 5)."""
    use_pos: bool = True
    """47-d POS one-hot (the official code always adds it)."""
    use_exact_match: bool = True
    """Binary exact-match flag."""
    highway_layers: int = 2
    """Highway layers shared by premise and hypothesis (paper: 2)."""
    highway_activation: str = "relu"
    """Transform of each highway layer: "relu" (official code) or "tanh" (eq. 9 of the Table 6 variant)."""
    encoding: str = "self_attention"
    """"self_attention" (highway → self-attention → fuse gate), "highway_only" (Table 5 row 4:
    "− self-att and fuse gate") or "none" (row 3: "− encoding layer", I is built from the embedding)."""
    fuse: str = "two_gates"
    """How the self-attention output joins the highway output: "two_gates" (eqs. 3–6 as printed, and the
    official code), "one_gate" (f∘P_hw + (1−f)∘z), "addition" (row 6: P_hw + P_itrAtt) or "none"
    (row 5: P_itrAtt alone)."""
    share_encoders: bool = False
    """One self-attention + fuse gate for both sentences (then there is no difference penalty)."""
    interaction: str = "dense"
    """"dense" (I_ij = p_i∘h_j, d channels) or "similarity" (row 7: one channel, p_i·h_j)."""
    mask_interaction: bool = True
    """Zero the cells of padded tokens in I (the official code does not)."""
    feature_extractor: str = "densenet"
    """"densenet" or "none" (row 2: encoding-based, max-pool over time and [p; h; |p−h|; p∘h])."""
    first_scale_down_ratio: float = 0.3
    """FSDR: the 1×1 conv keeps floor(d·FSDR) channels (paper: 0.3)."""
    dense_blocks: int = 3
    """Dense block + transition pairs (paper: 3)."""
    dense_layers: int = 8
    """3×3 conv layers per dense block, n (paper: 8)."""
    growth_rate: int = 20
    """Channels each dense layer adds, GR (paper: 20)."""
    dense_kernel: int = 3
    """Kernel of the dense layers (paper: 3×3)."""
    transition_scale_down_ratio: float = 0.5
    """TSDR: a transition keeps floor(c·TSDR) channels (paper: 0.5)."""
    dropout: float = 0.0
    """Initial dropout rate (paper: keep rate 1.0 at the start, decayed by the trainer's schedule)."""
    freeze_word_embeddings: bool = False
    """The paper updates word embeddings during training."""


class Highway(nn.Module):
    """Highway layers over [B, T, d_in] → [B, T, d_out]; the first projects the carry path when widths differ
    (eq. 11). Returns the output and each layer's transform gate g (the share of the transform kept)."""

    def __init__(self, in_dim: int, out_dim: int, layers: int, activation: str, dropout: nn.Dropout):
        super().__init__()
        if activation not in HIGHWAY_ACTIVATIONS:
            raise ValueError(f"highway_activation must be one of {sorted(HIGHWAY_ACTIVATIONS)}, got {activation!r}")
        self.activation = HIGHWAY_ACTIVATIONS[activation]
        widths = [in_dim] + [out_dim] * layers
        self.transforms = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.gates = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.carry = nn.Linear(in_dim, out_dim) if in_dim != out_dim and layers > 0 else None
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        # B batch, T tokens, d width
        gates = []
        for index, (transform, gate) in enumerate(zip(self.transforms, self.gates)):
            dropped = self.dropout(x)
            t = self.activation(transform(dropped))  # eq. 9
            g = torch.sigmoid(gate(dropped))  # eq. 10
            carried = self.carry(dropped) if index == 0 and self.carry is not None else x  # eq. 11
            x = g * t + (1.0 - g) * carried  # eq. 12
            gates.append(g)
        return x, gates


class SelfAttentionEncoder(nn.Module):
    """Tri-linear self-attention (eqs. 1–2) and the fuse of its output with its input, for one sentence. This
    base class keeps the self-attention output alone (Table 5 row 5, `fuse = "none"`); its subclasses in FUSES
    are the other fuses, chosen by name (the `fuse` option)."""

    has_gates: ClassVar[bool] = False
    """Whether its fuse has gates to trace (as `Gate` entries)."""

    def __init__(self, dim: int, dropout: nn.Dropout):
        super().__init__()
        self.score_weight = nn.Parameter(torch.empty(3, dim))  # w_itrAtt = [w_a; w_b; w_ab]
        nn.init.uniform_(self.score_weight, -1.0 / math.sqrt(dim), 1.0 / math.sqrt(dim))
        self.add_fuse_weights(dim)
        self.dropout = dropout

    def add_fuse_weights(self, dim: int) -> None:
        """The fuse's own weights, if any."""

    def fuse(self, x: torch.Tensor, attended: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """P_enc from P_hw (x) and P_itrAtt (attended), both [B, T, d], and the fuse's gates. Here P_itrAtt."""
        return attended, {}

    def forward(self, x: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        # B batch, T tokens (the grid), d width; returns P_enc [B, T, d], weights [B, T, T], gates
        a = self.dropout(x)
        w_a, w_b, w_ab = self.score_weight
        scores = ((a @ w_a).unsqueeze(2) + (a @ w_b).unsqueeze(1)
                  + torch.bmm(a * w_ab, a.transpose(1, 2)))  # A_ij  [B, T, T]  eq. 1
        weights = masked_softmax(scores, mask.unsqueeze(1), dim=2)  # over j  eq. 2
        attended = torch.bmm(weights, x)  # P_itrAtt  [B, T, d]
        encoded, gates = self.fuse(x, attended)  # P_enc  [B, T, d]
        return encoded, weights, gates


class AdditionFuse(SelfAttentionEncoder):
    """Table 5 row 6: P_enc = P_hw + P_itrAtt."""

    def fuse(self, x: torch.Tensor, attended: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        return x + attended, {}  # [B, T, d]


class OneGateFuse(SelfAttentionEncoder):
    """The often-quoted one-gate form: P_enc = f∘P_hw + (1−f)∘z."""

    has_gates = True

    def add_fuse_weights(self, dim: int) -> None:
        self.candidate = nn.Linear(2 * dim, dim)  # W1, b1  eq. 3
        self.keep_gate = nn.Linear(2 * dim, dim)  # W2, b2  eq. 4 (here f)

    def candidate_and_keep(self, x: torch.Tensor, attended: torch.Tensor
                           ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
        """The joined input [B, T, 2d], the candidate z [B, T, d] and the keep gate."""
        joined = self.dropout(torch.cat([x, attended], dim=-1))  # [B, T, 2d]
        z = torch.tanh(self.candidate(joined))  # [B, T, d]  eq. 3
        return joined, z, {"fuse_keep": torch.sigmoid(self.keep_gate(joined))}  # r  [B, T, d]  eq. 4

    def fuse(self, x: torch.Tensor, attended: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        _, z, gates = self.candidate_and_keep(x, attended)
        return gates["fuse_keep"] * x + (1.0 - gates["fuse_keep"]) * z, gates  # [B, T, d]


class TwoGateFuse(OneGateFuse):
    """Eqs. 3–6 as printed (and the official code's default): P_enc = r∘P_hw + f∘z, two independent gates."""

    def add_fuse_weights(self, dim: int) -> None:
        super().add_fuse_weights(dim)
        self.write_gate = nn.Linear(2 * dim, dim)  # W3, b3  eq. 5

    def fuse(self, x: torch.Tensor, attended: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        joined, z, gates = self.candidate_and_keep(x, attended)
        gates["fuse_write"] = torch.sigmoid(self.write_gate(joined))  # f  [B, T, d]  eq. 5
        return gates["fuse_keep"] * x + gates["fuse_write"] * z, gates  # [B, T, d]  eq. 6


FUSES: dict[str, type[SelfAttentionEncoder]] = {
    "two_gates": TwoGateFuse, "one_gate": OneGateFuse, "addition": AdditionFuse, "none": SelfAttentionEncoder}
"""The `fuse` option → the self-attention encoder that fuses so (RE2-style: a part chosen by name)."""


class DenseBlock(nn.Module):
    """n layers of k×k conv + ReLU, each seeing the concatenation of the block input and all earlier outputs."""

    def __init__(self, in_channels: int, layers: int, growth_rate: int, kernel: int):
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv2d(in_channels + i * growth_rate, growth_rate, kernel, padding=kernel // 2) for i in range(layers))
        self.out_channels = in_channels + layers * growth_rate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # B batch, C channels, P × H grid → [B, C + n·GR, P, H]
        features = [x]
        for conv in self.convs:
            features.append(torch.relu(conv(torch.cat(features, dim=1))))
        return torch.cat(features, dim=1)


class Transition(nn.Module):
    """1×1 conv scale-down by TSDR (no activation), then 2×2 max-pool with stride 2."""

    def __init__(self, in_channels: int, ratio: float):
        super().__init__()
        self.out_channels = max(1, math.floor(in_channels * ratio))
        self.conv = nn.Conv2d(in_channels, self.out_channels, 1)
        self.pool = nn.MaxPool2d(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(x))


class DenseNetFeatures(nn.Module):
    """Stages 3–4: I from the encoded sentences (`interaction`), then the 1×1 scale-down by FSDR (no ReLU) and
    dense block + transition pairs, flattened for the output layer."""

    def __init__(self, config: DIINConfig, dim: int, dropout: nn.Dropout):
        super().__init__()
        c = config
        if c.sequence_length < 2 ** c.dense_blocks or c.sequence_length % 2 ** c.dense_blocks:
            raise ValueError(f"DIIN sequence_length {c.sequence_length} must be a positive multiple of "
                             f"2 ** dense_blocks = {2 ** c.dense_blocks} so the transitions' pooling tiles it")
        self.interaction = INTERACTIONS[c.interaction]
        self.mask_interaction = c.mask_interaction
        channels = 1 if self.interaction.one_channel else dim
        self.scale_down = nn.Conv2d(channels, max(1, math.floor(channels * c.first_scale_down_ratio)), 1)
        channels = self.scale_down.out_channels
        self.blocks, self.transitions = nn.ModuleList(), nn.ModuleList()
        for _ in range(c.dense_blocks):
            block = DenseBlock(channels, c.dense_layers, c.growth_rate, c.dense_kernel)
            transition = Transition(block.out_channels, c.transition_scale_down_ratio)
            self.blocks.append(block)
            self.transitions.append(transition)
            channels = transition.out_channels
        side = c.sequence_length // 2 ** c.dense_blocks
        self.output_dim = channels * side * side
        self.dropout = dropout

    @staticmethod
    def trace_types(config: DIINConfig) -> set[type]:
        return {FeatureMaps, *([Alignment] if INTERACTIONS[config.interaction].one_channel else [])}

    def forward(self, p_enc: torch.Tensor, h_enc: torch.Tensor, pm: torch.Tensor, hm: torch.Tensor,
                trace: Trace | None, crop: tuple[int, int]) -> torch.Tensor:
        # B batch, L grid, d width, C interaction channels; returns [B, c·s·s]
        interaction = self.interaction.build(p_enc, h_enc)  # I  [B, C, L, L]
        if self.mask_interaction:
            cells = (pm.unsqueeze(2) & hm.unsqueeze(1)).unsqueeze(1)  # [B, 1, L, L]
            interaction = interaction * cells.to(interaction.dtype)
        if trace is not None:
            p, h = crop
            trace.add("interaction", FeatureMaps(interaction[:, :, :p, :h], stage="interaction", token_axes=True))
            if self.interaction.one_channel:
                trace.add("similarity_p↔h", Alignment(interaction[:, 0, :p, :h], rows="premise", cols="hypothesis",
                                                      layer=1, direction="p↔h", kind="similarity"))
        return self.extract(interaction, trace, crop)  # [B, c·s·s]

    def extract(self, interaction: torch.Tensor, trace: Trace | None, crop: tuple[int, int]) -> torch.Tensor:
        """I [B, C, L, L] → flattened DenseNet features [B, c·s·s], tracing the maps on the way."""
        p, h = crop
        x = self.scale_down(self.dropout(interaction))  # no ReLU
        if trace is not None:
            trace.add("scale_down", FeatureMaps(x[:, :, :p, :h], stage="scale_down", token_axes=True))
        for index, (block, transition) in enumerate(zip(self.blocks, self.transitions), start=1):
            carried = x.shape[1]
            x = block(x)  # [B, carried + n·GR, s, s]: the block's input, then the channels it adds
            if trace is not None:
                on_tokens = index == 1
                added = x[:, carried:]  # the carried channels are the previous stage's, traced there
                maps = added[:, :, :p, :h] if on_tokens else added
                trace.add(f"dense_block_{index}", FeatureMaps(maps, stage=f"dense_block_{index}", token_axes=on_tokens))
            x = transition(x)
        return x.flatten(start_dim=1)


class EncodingPooling(nn.Module):
    """Table 5 row 2 ("− feature extraction", encoding-based): no interaction; each sentence max-pooled over
    time, then [p; h; |p−h|; p∘h]."""

    def __init__(self, config: DIINConfig, dim: int, dropout: nn.Dropout):
        super().__init__()
        self.output_dim = 4 * dim

    @staticmethod
    def trace_types(config: DIINConfig) -> set[type]:
        return set()

    def forward(self, p_enc: torch.Tensor, h_enc: torch.Tensor, pm: torch.Tensor, hm: torch.Tensor,
                trace: Trace | None, crop: tuple[int, int]) -> torch.Tensor:
        # B batch, L grid, d width
        p_vec, h_vec = masked_max(p_enc, pm), masked_max(h_enc, hm)  # [B, d]
        return torch.cat([p_vec, h_vec, (p_vec - h_vec).abs(), p_vec * h_vec], dim=-1)  # [B, 4d]


FEATURE_EXTRACTORS: dict[str, type[DenseNetFeatures] | type[EncodingPooling]] = {
    "densenet": DenseNetFeatures, "none": EncodingPooling}
"""The `feature_extractor` option → stages 3–4 (RE2-style: a part chosen by name). Each takes (config, d,
dropout), has `output_dim` (the output layer's input width), `trace_types(config)` and
forward(P_enc, H_enc, masks, trace, crop) → [B, output_dim]."""
EXTRACTOR = "extractor"
"""The model's attribute holding its feature extractor. Its weights are stored under their own names
(scale_down.*, blocks.*, transitions.*) at the top of the state dict, as before it was a part of its own,
so every checkpoint keeps its keys (`_flatten_extractor_keys`, `_nest_extractor_keys`)."""


def _flatten_extractor_keys(module: nn.Module, state: dict[str, torch.Tensor], prefix: str, metadata: dict) -> None:
    """State-dict post-hook: `<prefix>extractor.scale_down.weight` → `<prefix>scale_down.weight`, order kept."""
    nested = f"{prefix}{EXTRACTOR}."
    items = list(state.items())
    state.clear()
    state.update((prefix + key[len(nested):] if key.startswith(nested) else key, value) for key, value in items)


def _nest_extractor_keys(module: nn.Module, state: dict[str, torch.Tensor], prefix: str, *_: object) -> None:
    """Load-state-dict pre-hook: the top-level names of the extractor's parts go back under `extractor.`."""
    parts = tuple(f"{prefix}{name}." for name in getattr(module, EXTRACTOR)._modules)
    for key in [key for key in state if key.startswith(parts)]:
        state[f"{prefix}{EXTRACTOR}.{key[len(prefix):]}"] = state.pop(key)


@register("diin")
class DIIN(MatchingModel):
    """Embedding → highway + self-attention + fuse gate → I = p∘h → DenseNet → linear; see the module docstring."""

    config_class = DIINConfig
    max_inference_batch: ClassVar[int] = 32
    """Measured (bench/results/eval-batch-*.md): 1.35× (shipped) and 1.54× (paper) less time per pair than 64,
    1.8× less than 256 (the [B, d, L, L] interaction tensor and the dense-block concatenations grow with B)."""
    tiny_overrides: ClassVar[dict] = {"sequence_length": 8, "char_dim": 4, "char_filters": 5, "char_width": 3,
                                      "word_dim": 10, "vocab_size": 30, "char_vocab_size": 20, "dense_blocks": 2,
                                      "dense_layers": 2, "growth_rate": 3, "dropout": 0.0,
                                      "freeze_word_embeddings": True}

    def trace_types(self) -> frozenset[type]:
        c = self.config
        attends = c.encoding == "self_attention"
        highway_gates = c.encoding != "none" and c.highway_layers > 0
        fuse_gates = attends and FUSES[c.fuse].has_gates
        return (super().trace_types() | FEATURE_EXTRACTORS[c.feature_extractor].trace_types(c)
                | {*([Gate] if highway_gates or fuse_gates else []), *([Alignment] if attends else [])})

    def __init__(self, config: DIINConfig):
        super().__init__(config)
        c = config
        for option, value, allowed in (("encoding", c.encoding, ENCODINGS), ("fuse", c.fuse, tuple(FUSES)),
                                       ("interaction", c.interaction, tuple(INTERACTIONS)),
                                       ("feature_extractor", c.feature_extractor, tuple(FEATURE_EXTRACTORS))):
            if value not in allowed:
                raise ValueError(f"DIIN {option} must be one of {allowed}, got {value!r}")
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings, use_chars=c.use_chars,
                                      char_vocab_size=c.char_vocab_size, char_dim=c.char_dim,
                                      char_filters=c.char_filters, char_width=c.char_width, use_pos=c.use_pos,
                                      use_exact_match=c.use_exact_match)
        embedding_dim = self.features.output_dim
        d = c.model_dim or embedding_dim
        self.model_dim = d
        self.dropout = nn.Dropout(c.dropout)
        self.highway = (Highway(embedding_dim, d, c.highway_layers, c.highway_activation, self.dropout)
                        if c.encoding != "none" else None)
        # Without an encoding layer a width other than the embedding's needs its own projection.
        self.projection = nn.Linear(embedding_dim, d) if c.encoding == "none" and d != embedding_dim else None
        self.premise_encoder = self.hypothesis_encoder = None
        if c.encoding == "self_attention":
            self.premise_encoder = FUSES[c.fuse](d, self.dropout)
            self.hypothesis_encoder = self.premise_encoder if c.share_encoders else FUSES[c.fuse](d, self.dropout)
        self.extractor = FEATURE_EXTRACTORS[c.feature_extractor](c, d, self.dropout)  # stages 3–4
        self.classifier = nn.Linear(self.extractor.output_dim, c.num_classes)
        self.register_state_dict_post_hook(_flatten_extractor_keys)
        self.register_load_state_dict_pre_hook(_nest_extractor_keys)

    # ------------------------------------------------------------------ stages

    def to_grid(self, ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor, exact_match: torch.Tensor,
                mask: torch.Tensor, sentence: str) -> tuple[torch.Tensor, ...]:
        """Zero every padded position and right-pad to `sequence_length`, so the grid never depends on the
        batch's own padding."""
        # B batch, T tokens, C chars per word
        length, width = self.config.sequence_length, ids.shape[1]
        if int(mask.sum(dim=1).max()) > length:
            raise ValueError(f"DIIN reads at most {length} {sentence} tokens (sequence_length); a batch holds "
                             f"{int(mask.sum(dim=1).max())}. Cut sentences to the config's max lengths first.")
        keep = mask[:, :length]
        out = []
        for tensor in (ids, chars, pos, exact_match, mask):
            tensor = tensor[:, :length]
            tensor = tensor * keep.view(keep.shape + (1,) * (tensor.dim() - 2)).to(tensor.dtype)
            pad = [0, 0] * (tensor.dim() - 2) + [0, length - tensor.shape[1]]
            out.append(nn.functional.pad(tensor, pad))
        return tuple(out)

    def embed(self, ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor,
              exact_match: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.features(ids, chars, pos, exact_match))  # [B, L, embedding width]

    def encode(self, x: torch.Tensor, mask: torch.Tensor, encoder: SelfAttentionEncoder | None
               ) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor | None, dict[str, torch.Tensor]]:
        """Embedding [B, L, e] → P_enc [B, L, d], with highway gates, self-attention weights and fuse gates."""
        if self.highway is None:
            encoded = self.projection(x) if self.projection is not None else x
            return encoded, [], None, {}
        hw, highway_gates = self.highway(x)  # P_hw  [B, L, d]
        if encoder is None:
            return hw, highway_gates, None, {}
        encoded, weights, fuse_gates = encoder(hw, mask)
        return encoded, highway_gates, weights, fuse_gates

    # ------------------------------------------------------------------ forward

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len (of the batch), L grid = sequence_length, e embedding
        # width, d model width, C interaction channels, K classes
        p_len, h_len = batch.premise_ids.shape[1], batch.hypothesis_ids.shape[1]
        crop = (min(p_len, self.config.sequence_length), min(h_len, self.config.sequence_length))
        *p_inputs, pm = self.to_grid(batch.premise_ids, batch.premise_chars, batch.premise_pos,
                                     batch.premise_exact_match, batch.premise_mask, "premise")
        *h_inputs, hm = self.to_grid(batch.hypothesis_ids, batch.hypothesis_chars, batch.hypothesis_pos,
                                     batch.hypothesis_exact_match, batch.hypothesis_mask, "hypothesis")
        p_enc, p_hw_gates, p_att, p_fuse = self.encode(self.embed(*p_inputs), pm, self.premise_encoder)  # [B, L, d]
        h_enc, h_hw_gates, h_att, h_fuse = self.encode(self.embed(*h_inputs), hm, self.hypothesis_encoder)  # [B, L, d]
        if trace is not None:
            self._trace_encoding(trace, crop, (p_hw_gates, h_hw_gates), (p_att, h_att), (p_fuse, h_fuse))

        pooled = self.extractor(p_enc, h_enc, pm, hm, trace, crop)  # [B, output_dim]: c·s·s (DenseNet) or 4d
        logits = self.classifier(self.dropout(pooled))  # [B, K]
        if trace is not None:
            trace.add("pooled", Representation(pooled, name="pair"))
        return logits

    def _trace_encoding(self, trace: Trace, crop: tuple[int, int], highway_gates, attention, fuse_gates) -> None:
        """Highway gates, self-attention weights and fuse gates, cropped to the batch's token axes."""
        lengths = dict(zip(("premise", "hypothesis"), crop))
        for sentence, gates in zip(lengths, highway_gates):
            for layer, values in enumerate(gates, start=1):
                trace.add(f"highway{layer}_gate_{sentence}",
                          Gate(values[:, :lengths[sentence]], tokens=sentence, layer=layer, name="highway"))
        for sentence, weights in zip(lengths, attention):
            if weights is not None:
                n, arrow = lengths[sentence], "p→p" if sentence == "premise" else "h→h"
                trace.add(f"self_attention_{arrow}", Alignment(weights[:, :n, :n], rows=sentence, cols=sentence,
                                                               layer=1, direction=arrow, kind="softmax"))
        layer = len(highway_gates[0]) + 1
        for sentence, gates in zip(lengths, fuse_gates):
            for kind, values in gates.items():
                trace.add(f"{kind}_gate_{sentence}",
                          Gate(values[:, :lengths[sentence]], tokens=sentence, layer=layer, name=kind))

    def regularization_terms(self) -> dict[str, torch.Tensor]:
        """`encoder_difference`: tf.nn.l2_loss (sum of squares / 2) of the difference between the premise and
        hypothesis encoders' weights (biases excluded), which the trainer weights by 1e-3 as in the paper."""
        if self.premise_encoder is None or self.premise_encoder is self.hypothesis_encoder:
            return {}
        pairs = zip(self.premise_encoder.named_parameters(), self.hypothesis_encoder.named_parameters())
        total = sum(0.5 * ((p - h) ** 2).sum() for (name, p), (_, h) in pairs if not name.endswith("bias"))
        return {"encoder_difference": total}
