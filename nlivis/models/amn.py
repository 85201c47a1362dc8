"""AMN: attention memory networks for NLI (Liu et al.; papers/004), with a sparsemax output layer.

Each sentence is read by an attention memory encoder (AMNN, eqs. 1–5). The memory M has one slot per
token and starts as the token's embedding; at every step t
    o_t = f_input(x_t)                          eq. 1  (a GRU or LSTM over the words)
    a_t = softmax(o_t^T M_{t−1})                eq. 2  (key over the memory slots)
    m_t = a_t^T M_{t−1}                         eq. 3  (read)
    h_t = f_output(o_t, m_t)                    eq. 4  (compose: a GRU/LSTM over [o_t; m_t])
    M_t = M_{t−1} ∘ (1 − a_t 1^T) + a_t h_t^T   eq. 5  (erase the addressed slots, write h_t there)
The sentence vector is the last output state h_T. The matching layer builds V = [V_p; V_h; V_p − V_h;
V_p ∘ V_h] (eq. 6), a tanh hidden layer projects it and the output is sparsemax with the sparsemax loss
(Martins & Astudillo 2016, via entmax) or, as a switch, softmax with cross-entropy.

Choices the paper leaves open, named here: f_output is a recurrent cell whose input is [o_t; m_t] (the
paper calls both functions GRUs), premise and hypothesis have separate encoders (`share_encoder`), and
the MLP has one 600-wide tanh layer. With 300-d GloVe this counts 3.43M parameters for the GRU model
(paper: 3.5M) and 4.33M for the LSTM one (paper: 3.2M). An LSTM cell has 4/3 the weights of a GRU cell
of the same width, so the paper's LSTM count below its GRU count implies widths it does not report;
with `share_encoder = true` the counts are 2.08M / 2.53M.

The recurrence is sequential, but only the writing half of it: f_input never reads the memory, so the
reading cell runs over the whole sentence as one fused recurrent op before the loop, and each step
does only the key, the read, the writing cell and the write. Padded steps leave
every state and the memory unchanged, so results do not depend on how far a batch is padded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import torch
from entmax import sparsemax, sparsemax_loss
from torch import nn
from torch.nn import functional as F

from nlivis.features.batch import Batch
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.models.layers.masking import NEG_INF
from nlivis.models.registry import register
from nlivis.models.trace import MemoryKeys, Representation, Trace



@dataclass(frozen=True)
class OutputLayer:
    """How logits [B, K] become label probabilities, and the loss trained with them."""

    probabilities: Callable[[torch.Tensor], torch.Tensor]
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    """(logits [B, K], labels [B]) → the mean loss."""


OUTPUTS: dict[str, OutputLayer] = {
    "sparsemax": OutputLayer(lambda logits: sparsemax(logits, dim=-1),  # exact zeros possible
                             lambda logits, labels: sparsemax_loss(logits, labels).mean()),  # the logistic loss's analogue
    "softmax": OutputLayer(lambda logits: torch.softmax(logits, dim=-1), F.cross_entropy),
}
"""The `output` option → the output layer (RE2-style: a part chosen by name)."""


@dataclass
class AMNConfig(ModelConfig):
    cell: str = "gru"
    """Recurrent cell of f_input and f_output: "gru" (AMNs-G, the paper's main model) or "lstm" (AMNs-L)."""
    output: str = "sparsemax"
    """Output layer: "sparsemax" with the sparsemax loss (paper) or "softmax" with cross-entropy."""
    hidden_size: int = 0
    """Memory slot and state width. 0 = word_dim, as in the paper (the memory starts as the raw
    embeddings); another value projects the embeddings to it to form the initial memory."""
    share_encoder: bool = False
    """One encoder for premise and hypothesis. False (two encoders) matches the paper's 3.5M parameters."""
    mlp_hidden_size: int = 600
    """Width of the tanh layer before the output (not stated; chosen to meet the parameter count)."""
    dropout: float = 0.3
    """Dropout on the embeddings and the matching vector (paper: 0.3 for all dropout layers)."""


def gru_step(projected_input: torch.Tensor, state: torch.Tensor, cell: nn.GRUCell) -> torch.Tensor:
    """One GRUCell step given W_ih x + b_ih already computed (PyTorch's gate order r, z, n): the
    step-by-step form of `AttentionMemoryEncoder.read_all`, kept as its reference."""
    # B batch, d width; projected_input [B, 3d], state [B, d]
    hidden = F.linear(state, cell.weight_hh, cell.bias_hh)
    i_r, i_z, i_n = projected_input.chunk(3, dim=-1)
    h_r, h_z, h_n = hidden.chunk(3, dim=-1)
    reset = torch.sigmoid(i_r + h_r)
    update = torch.sigmoid(i_z + h_z)
    candidate = torch.tanh(i_n + reset * h_n)
    return (1.0 - update) * candidate + update * state


def lstm_step(projected_input: torch.Tensor, state: torch.Tensor, memory_cell: torch.Tensor,
              cell: nn.LSTMCell) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTMCell step given W_ih x + b_ih already computed (PyTorch's gate order i, f, g, o); the
    step-by-step form of `read_all` for the LSTM cell, kept as its reference."""
    # B batch, d width; projected_input [B, 4d], state and memory_cell [B, d]
    gates = projected_input + F.linear(state, cell.weight_hh, cell.bias_hh)
    i, f, g, o = gates.chunk(4, dim=-1)
    memory_cell = torch.sigmoid(f) * memory_cell + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(memory_cell), memory_cell


def _gru_over_sequence(x: torch.Tensor, zeros: torch.Tensor, params: list[torch.Tensor], training: bool
                       ) -> torch.Tensor:
    """A GRUCell's weights run over [B, T, w] as one fused op (gate order r, z, n) → outputs [B, T, d]."""
    out, _ = torch.gru(x, zeros, params, True, 1, 0.0, training, False, True)
    return out


def _lstm_over_sequence(x: torch.Tensor, zeros: torch.Tensor, params: list[torch.Tensor], training: bool
                        ) -> torch.Tensor:
    """An LSTMCell's weights run over [B, T, w] as one fused op (gate order i, f, g, o) → outputs [B, T, d]."""
    out, _, _ = torch.lstm(x, (zeros, zeros), params, True, 1, 0.0, training, False, True)
    return out


def _gru_write(writer: nn.Module, composed: torch.Tensor, state: torch.Tensor, memory_cell: torch.Tensor,
               step: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """f_output (eq. 4) as a GRU: the new state [B, d]; a GRU has no memory cell, returned unchanged."""
    return writer(composed, state), memory_cell


def _lstm_write(writer: nn.Module, composed: torch.Tensor, state: torch.Tensor, memory_cell: torch.Tensor,
                step: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """f_output (eq. 4) as an LSTM: the new state [B, d] and memory cell [B, d], kept on padding steps."""
    h, h_cell = writer(composed, (state, memory_cell))
    return h, torch.where(step, h_cell, memory_cell)


@dataclass(frozen=True)
class RecurrentCell:
    """The recurrent cell of f_input and f_output: its module, f_input over a whole sentence at once, and one
    writing step of f_output."""

    module: type[nn.GRUCell] | type[nn.LSTMCell]
    over_sequence: Callable[[torch.Tensor, torch.Tensor, list[torch.Tensor], bool], torch.Tensor]
    write: Callable[[nn.Module, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
                    tuple[torch.Tensor, torch.Tensor]]


CELLS: dict[str, RecurrentCell] = {"gru": RecurrentCell(nn.GRUCell, _gru_over_sequence, _gru_write),
                                   "lstm": RecurrentCell(nn.LSTMCell, _lstm_over_sequence, _lstm_write)}
"""The `cell` option → the recurrent cell (RE2-style: a part chosen by name)."""


def erase_and_write(memory: torch.Tensor, key: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
    """Eq. 5: each slot keeps (1 − a_s) of its content and receives a_s of the new state."""
    # B batch, S slots, d width; memory [B, S, d], key [B, 1, S], state [B, d] → [B, S, d]
    # M∘(1 − a) + a h^T = M + a∘(h^T − M): one fused lerp instead of four element-wise ops
    return torch.lerp(memory, state.unsqueeze(1), key.transpose(1, 2))


class AttentionMemoryEncoder(nn.Module):
    """AMNN (eqs. 1–5) over one batch of sentences → last output state [B, d] and the keys [B, T, S]."""

    def __init__(self, input_dim: int, dim: int, cell: str):
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {tuple(CELLS)}, got {cell!r}")
        self.cell = CELLS[cell]
        cell_class = self.cell.module
        self.memory_init = nn.Linear(input_dim, dim) if input_dim != dim else None
        self.reader = cell_class(input_dim, dim)  # f_input   eq. 1
        self.writer = cell_class(2 * dim, dim)  # f_output  eq. 4
        self.dim = dim

    def read_all(self, x: torch.Tensor) -> torch.Tensor:
        """o_1..o_T (eq. 1) for every step at once: f_input reads only the words and its own state, never
        the memory, so it runs as one fused recurrent op (torch.gru / torch.lstm with the cell's own
        weights, gate orders r,z,n / i,f,g,o as in GRUCell / LSTMCell). Right padding comes after the
        real steps, so their outputs are those of the step-by-step cell; padded steps' outputs are unused.
        The `train` flag follows the module's mode, as nn.GRU / nn.LSTM pass it: on CUDA, False selects
        cuDNN's inference path, whose results cannot be differentiated."""
        # B batch, T tokens, w input width, d width → [B, T, d]
        cell = self.reader
        params = [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
        zeros = x.new_zeros(1, x.shape[0], self.dim)
        return self.cell.over_sequence(x, zeros, params, self.training)  # [B, T, d]

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # B batch, T tokens (= S memory slots), w input width, d memory width
        batch, steps, _ = x.shape
        memory = x if self.memory_init is None else self.memory_init(x)  # M_0  [B, S, d]
        memory = memory * mask.unsqueeze(-1).to(memory.dtype)
        outputs = self.read_all(x)  # o_t for all t  [B, T, d]  eq. 1
        write_state = write_cell = x.new_zeros(batch, self.dim)
        free_slots = ~mask.unsqueeze(1)  # [B, 1, S]  True on padding slots
        steps_on = mask.unsqueeze(-1)  # [B, T, 1]  False on padding steps: nothing changes there
        keys = []
        for t in range(steps):
            step = steps_on[:, t]  # [B, 1]
            o = outputs[:, t]  # [B, d]
            scores = torch.bmm(o.unsqueeze(1), memory.transpose(1, 2))  # o_t^T M  [B, 1, S]
            # a_t (eq. 2): softmax over the real slots, all zero on a padding step (also where a row has
            # no real slot and the softmax is NaN)
            key = torch.where(step.unsqueeze(2), torch.softmax(scores.masked_fill(free_slots, NEG_INF), dim=2), 0.0)
            read = torch.bmm(key, memory).squeeze(1)  # m_t  [B, d]  eq. 3
            composed = torch.cat([o, read], dim=-1)  # [B, 2d]
            h, write_cell = self.cell.write(self.writer, composed, write_state, write_cell, step)  # [B, d]  eq. 4
            memory = erase_and_write(memory, key, h)  # eq. 5 (a zero key leaves M unchanged)
            write_state = torch.where(step, h, write_state)
            keys.append(key)
        return write_state, torch.cat(keys, dim=1)  # h_T [B, d], keys [B, T, S]


@register("amn")
class AMN(MatchingModel):
    """Two attention memory encoders, heuristic matching, tanh layer, sparsemax output; see the module docstring."""

    config_class = AMNConfig
    tiny_overrides: ClassVar[dict] = {"hidden_size": 8, "mlp_hidden_size": 6, "word_dim": 10, "vocab_size": 30,
                                      "char_vocab_size": 20, "dropout": 0.0}

    def trace_types(self) -> frozenset[type]:
        return super().trace_types() | {MemoryKeys}

    def __init__(self, config: AMNConfig):
        super().__init__(config)
        c = config
        if c.output not in OUTPUTS:
            raise ValueError(f"output must be one of {tuple(OUTPUTS)}, got {c.output!r}")
        self.output_kind = c.output
        d = c.hidden_size or c.word_dim
        self.features = TokenFeatures(c.vocab_size, c.word_dim, c.freeze_word_embeddings)
        self.dropout = nn.Dropout(c.dropout)
        self.premise_encoder = AttentionMemoryEncoder(c.word_dim, d, c.cell)
        self.hypothesis_encoder = (self.premise_encoder if c.share_encoder
                                   else AttentionMemoryEncoder(c.word_dim, d, c.cell))
        self.classifier = nn.Sequential(nn.Linear(4 * d, c.mlp_hidden_size), nn.Tanh(),
                                        nn.Linear(c.mlp_hidden_size, c.num_classes))

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:
        # B batch, P premise len, H hypothesis len, d memory width, K classes
        pm, hm = batch.premise_mask, batch.hypothesis_mask
        p, h = (self.dropout(side) for side in self.features.sides(batch))  # [B, P, w], [B, H, w]
        v_p, p_keys = self.premise_encoder(p, pm)  # [B, d], [B, P, P]
        v_h, h_keys = self.hypothesis_encoder(h, hm)  # [B, d], [B, H, H]
        v = torch.cat([v_p, v_h, v_p - v_h, v_p * v_h], dim=-1)  # V_c  [B, 4d]  eq. 6
        logits = self.classifier(self.dropout(v))  # [B, K]
        if trace is not None:
            trace.add("memory_keys_premise", MemoryKeys(p_keys, tokens="premise"))
            trace.add("memory_keys_hypothesis", MemoryKeys(h_keys, tokens="hypothesis"))
            trace.add("matching", Representation(v, name="pair"))
        return logits

    def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        """Sparsemax (exact zeros possible) or softmax, as configured."""
        return OUTPUTS[self.output_kind].probabilities(logits)  # [B, K]

    def loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean sparsemax loss (the sparsemax analogue of the logistic loss) or cross-entropy."""
        return OUTPUTS[self.output_kind].loss(logits, labels)
