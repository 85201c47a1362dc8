"""Per-pair salience: one score per premise and hypothesis token, from gradients, integrated gradients,
occlusion and the model's own attention, so attention and salience can be compared on equal terms.

Where the attribution is taken (`ATTRIBUTION_INPUTS`, the `at` argument):
- `token_features` (the default): the **whole per-token input representation**, the output of the model's
  `token_representation` module (`models.base.MatchingModel`): the word vector and, where the model uses
  them, the char-CNN vector (DIIN, ESAN, GCNN's char switch), the POS one-hot (DIIN, ESAN, GCNN's pos
  switch) and the exact-match flag (DIIN, ESAN), concatenated as the model reads them. The baseline of a
  real token is **the representation the model gives a removed token**: what `token_representation`
  outputs for a padding position (PAD word row, no characters, POS index 0, no exact match), computed by
  the model itself from the batch with every token set to padding. So integrated gradients ask the same
  question as occlusion and the ERASER deletions, which remove all of a token's features: a score is
  what the token contributes with everything it carries. (Deletion also re-computes the *other* tokens'
  exact-match flags; the baseline moves only the token's own features.)
- `word_vectors`: only the output of the word embedding (for DIIN the grid of `sequence_length` rows its
  `to_grid` pads every sentence to); char, POS and exact-match features are **held at their real values**
  and get no score. Baseline: the all-zero word vector (the PAD row's vector) at every real token. The
  earlier default; it measures less than deletion removes (README, "Which tokens decide").

A forward hook substitutes the vectors being attributed for the hooked module's output, so the models run
unchanged and gradients reach every use of them. Padding positions are never scaled (the baseline equals
the input there) and every score at a padded position is set to exactly zero.

Methods (`METHODS`); the sign convention is part of each method:
- `gradient`: the L2 norm over the representation's dimensions of ∂ target logit / ∂ representation
  (unsigned).
- `grad_x_input`: Σ_d gradient · (input − baseline) (signed; positive = supports the target class). With
  the word-vector input the baseline is zero, so this is the classic gradient × input; with the token
  features it is integrated gradients' one-step approximation, zero for a token that equals a removed one.
- `integrated_gradients`: Captum's `IntegratedGradients` from the baseline above (the mask still marks the
  token as real) to the input, Gauss–Legendre steps evaluated in one batch; summed over the
  representation's dimensions (signed). `completeness_gap` = (Σ attributions − Δ) / |Δ| with
  Δ = f(x) − f(baseline) in the target logit. **By default the step count adapts**: every pair starts at
  `DEFAULT_STEPS` = 50, and a pair whose |Σ attributions − Δ| is at least `GAP_TOLERANCE` (0.05) of
  max(|Δ|, `DIFFERENCE_FLOOR`) is recomputed at twice the steps, up to `MAX_STEPS` = 1600 (max pooling and
  ReLU kinks make the integrand rough, so a few pairs need more points). Each pair reports the steps it
  used. Where |Δ| < `DIFFERENCE_FLOOR` (0.01 logit) the relative gap divides by almost nothing and is not
  a meaningful measure; such a pair is refined until its absolute error is below 0.05 × the floor, and
  `completeness_note` says so (`completeness_note` also says when a pair still misses 0.05 at the cap).
  An explicit step count computes exactly that many steps, without refinement.
- `occlusion`: leave one token out — p(target | x) − p(target | x with that token deleted), the token
  really deleted as `delete_tokens` does it (signed; positive = the token supported the target).
- `attention`: the model's alignments reduced to one score per token by `attention_scores`' rule, per
  layer and averaged over layers (unsigned).

Targets are the predicted class by default; any class index on request.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Iterator, Sequence

import torch
from torch import nn

from nlivis.analysis.method_names import ATTRIBUTION_INPUTS, DEFAULT_INPUT, METHODS
from nlivis.features.sentences import SentenceAnalysis
from nlivis.features.batch import Batch
from nlivis.features.chars import UNK_ID
from nlivis.features.exact_match import match_matrix
from nlivis.features.featurize import cut_sentence
from nlivis.features.wordpieces import masked_pieces
from nlivis.models.base import MatchingModel
from nlivis.models.trace import Alignment, MemoryKeys, Trace

INPUT_NOTES = {"token_features": "at the token features (word, char, POS, exact match, as the model reads them), "
                                 "from a removed token's representation",
               "word_vectors": "at the word vectors (other features held), from the zero word vector"}
"""How a score's input and baseline are described to a user."""
SIGNED_METHODS = frozenset({"integrated_gradients", "grad_x_input", "occlusion"})
"""Methods whose scores keep their sign (positive = evidence for the target class)."""
DEFAULT_STEPS = 50
"""Integrated-gradients interpolation steps (Gauss–Legendre) of the first pass, all in one forward/backward."""
MAX_STEPS = 1600
"""Refinement doubles a pair's steps (50, 100, 200, 400, 800, 1600) until it meets `GAP_TOLERANCE` or reaches
this. 800 was enough for the word vectors; at the token features one ESAN pair of 200 (|Δ| = 0.011 logit,
just above the floor) still missed at 800 (gap 0.069) and met it at 1600 (0.020)."""
GAP_TOLERANCE = 0.05
"""The completeness target: |Σ attributions − Δ| < GAP_TOLERANCE · max(|Δ|, DIFFERENCE_FLOOR)."""
DIFFERENCE_FLOOR = 0.01
"""Target-logit difference Δ = f(x) − f(baseline) below which the relative gap is not meaningful (a change of
at most 0.0025 in any softmax probability): such pairs are held to an absolute error of GAP_TOLERANCE · floor."""
MAX_ROWS_PER_PASS = 400
"""Interpolation rows (pairs × steps) per forward/backward, to bound memory at high step counts: a pass
takes max(pairs × DEFAULT_STEPS, this) rows, so the default first pass is always one forward/backward."""

ATTENTION_RULE = (
    "attention a token receives: for a cross-sentence alignment (p→h, h→p) the sum, over the other "
    "sentence's real tokens, of the weights they put on it (the column sum); per layer, then averaged over "
    "layers. A model without cross-sentence attention uses its intra-sentence attention the same way "
    "(DIIN: self-attention p→p, h→h); AMN has no alignment at all and uses its memory keys: the addressing "
    "weight a token's memory slot receives, summed over the reading steps. Raw similarity grids (DIIN's "
    "similarity switch) are not distributions and are not used."
)


@dataclass
class TokenScores:
    """One method's scores for one pair; padding is already cut off (lists are as long as the tokens)."""

    method: str
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    premise_scores: list[float]
    hypothesis_scores: list[float]
    target: int
    predicted: int
    completeness_gap: float | None = None
    """Integrated gradients only: the relative completeness gap (see the module docstring)."""
    completeness_difference: float | None = None
    """Integrated gradients only: Δ = f(x) − f(baseline) in the target logit, the gap's denominator."""
    completeness_note: str | None = None
    """Integrated gradients only: why the gap is not meaningful (|Δ| below the floor) or still ≥ 0.05 after
    the steps used; None when the gap meets the tolerance."""
    steps: int | None = None
    """Integrated gradients only: the interpolation steps this pair used (after any refinement)."""
    layers: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    """Attention only: per-layer (premise, hypothesis) scores, keyed by a layer label."""
    note: str = ""

    @property
    def scores(self) -> list[float]:
        """Premise then hypothesis scores, the order every ranking uses."""
        return list(self.premise_scores) + list(self.hypothesis_scores)


# ------------------------------------------------------------------------------ input plumbing

def tile_batch(batch: Batch, copies: int) -> Batch:
    """The whole batch repeated `copies` times along the batch axis (copy-major: rows 0..B-1, then again),
    the order Captum lays out interpolation steps in."""
    if copies == 1:
        return batch
    tiled = {}
    for f in fields(batch):
        value = getattr(batch, f.name)
        if isinstance(value, torch.Tensor):
            tiled[f.name] = value.repeat(copies, *([1] * (value.dim() - 1)))
        elif isinstance(value, list):
            tiled[f.name] = value * copies
    return replace(batch, **tiled)


def select_rows(batch: Batch, rows: torch.Tensor) -> Batch:
    """The pairs at `rows` (indices) of the batch, every tensor keeping its padded width."""
    chosen = {}
    indices = rows.tolist()
    for f in fields(batch):
        value = getattr(batch, f.name)
        if isinstance(value, torch.Tensor):
            chosen[f.name] = value[rows]
        elif isinstance(value, list) and value:
            chosen[f.name] = [value[i] for i in indices]
    return replace(batch, **chosen)


def input_module(model: MatchingModel, at: str) -> nn.Module:
    """The module whose output `at` attributes (see `ATTRIBUTION_INPUTS`)."""
    if at not in ATTRIBUTION_INPUTS:
        raise ValueError(f"unknown attribution input {at!r}; known: {list(ATTRIBUTION_INPUTS)}")
    return model.token_representation if at == "token_features" else model.word_embedding


def input_vectors(model: MatchingModel, batch: Batch, at: str = DEFAULT_INPUT) -> tuple[torch.Tensor, torch.Tensor]:
    """The attributed module's outputs for the premise and the hypothesis, [B, P', d] and [B, H', d], as the
    model computes them (P' = P, or DIIN's grid length)."""
    captured: list[torch.Tensor] = []

    def record(module: nn.Module, inputs, output: torch.Tensor) -> None:
        captured.append(output.detach())

    handle = input_module(model, at).register_forward_hook(record)
    try:
        with torch.no_grad():
            model(batch)
    finally:
        handle.remove()
    if len(captured) != 2:
        raise RuntimeError(f"{type(model).__name__} called its {at} module {len(captured)} times in one forward "
                           "pass; attribution needs exactly two calls (premise, then hypothesis)")
    return captured[0], captured[1]


def all_padding(batch: Batch) -> Batch:
    """The batch with every token's features set to padding (PAD word, no characters, POS 0, no exact match)
    and the masks unchanged: what the model computes from it at a real position is the representation it
    gives a removed token."""
    return replace(batch, premise_ids=torch.zeros_like(batch.premise_ids),
                   hypothesis_ids=torch.zeros_like(batch.hypothesis_ids),
                   premise_chars=torch.zeros_like(batch.premise_chars),
                   hypothesis_chars=torch.zeros_like(batch.hypothesis_chars),
                   premise_pos=torch.zeros_like(batch.premise_pos), hypothesis_pos=torch.zeros_like(batch.hypothesis_pos),
                   premise_exact_match=torch.zeros_like(batch.premise_exact_match),
                   hypothesis_exact_match=torch.zeros_like(batch.hypothesis_exact_match),
                   **({} if batch.premise_pieces is None else  # word pieces (MiniLM): [MASK] for each real piece
                      {"premise_pieces": masked_pieces(batch.premise_pieces),
                       "hypothesis_pieces": masked_pieces(batch.hypothesis_pieces)}))


def removed_token_baseline(model: MatchingModel, batch: Batch, premise: torch.Tensor, hypothesis: torch.Tensor,
                           at: str = DEFAULT_INPUT) -> tuple[torch.Tensor, torch.Tensor]:
    """Integrated gradients' baseline for `input_vectors` output: at every real token the representation of
    a removed token (`token_features`: the padding representation the model computes; `word_vectors`: the
    zero vector), at padding the input itself."""
    p_real = _grid_mask(batch.premise_mask, premise.shape[1]).unsqueeze(-1)
    h_real = _grid_mask(batch.hypothesis_mask, hypothesis.shape[1]).unsqueeze(-1)
    if at == "word_vectors":
        return premise * ~p_real, hypothesis * ~h_real
    pad_premise, pad_hypothesis = input_vectors(model, all_padding(batch), at)
    return torch.where(p_real, pad_premise, premise), torch.where(h_real, pad_hypothesis, hypothesis)


@contextmanager
def substituted_inputs(module: nn.Module, premise: torch.Tensor, hypothesis: torch.Tensor) -> Iterator[None]:
    """Within the block, `module` returns `premise` on its first call and `hypothesis` on its second (every
    model embeds the premise first); a third call or a shape mismatch is an error."""
    queue = [premise, hypothesis]
    calls = [0]

    def substitute(module: nn.Module, inputs, output: torch.Tensor) -> torch.Tensor:
        if calls[0] >= 2:
            raise RuntimeError("the attributed input module was called more than twice in one forward pass")
        vectors = queue[calls[0]]
        calls[0] += 1
        if vectors.shape != output.shape:
            raise RuntimeError(f"substituted inputs have shape {tuple(vectors.shape)}, the module "
                               f"produced {tuple(output.shape)}")
        return vectors

    handle = module.register_forward_hook(substitute)
    try:
        yield
    finally:
        handle.remove()


class InputForward:
    """f(premise inputs, hypothesis inputs) → logits, for a fixed batch of B pairs, the inputs substituted
    for the output of `input_module(model, at)`.

    Inputs may hold k·B rows (k copies, copy-major), as Captum passes interpolation steps; the batch's
    other features are tiled to match.
    """

    def __init__(self, model: MatchingModel, batch: Batch, at: str = DEFAULT_INPUT):
        self.model = model
        self.batch = batch
        self.module = input_module(model, at)

    def __call__(self, premise: torch.Tensor, hypothesis: torch.Tensor) -> torch.Tensor:
        copies, remainder = divmod(premise.shape[0], len(self.batch))
        if remainder:
            raise ValueError(f"{premise.shape[0]} rows are not a multiple of the batch's {len(self.batch)} pairs")
        with substituted_inputs(self.module, premise, hypothesis):
            return self.model(tile_batch(self.batch, copies))


def _grid_mask(mask: torch.Tensor, length: int) -> torch.Tensor:
    """The token mask [B, T] cut or right-padded with False to the embedding's length (DIIN's grid)."""
    if mask.shape[1] >= length:
        return mask[:, :length]
    return nn.functional.pad(mask, (0, length - mask.shape[1]), value=False)


def _to_token_scores(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-position scores [B, L'] onto the batch's token axis [B, T], zero at padding."""
    t = mask.shape[1]
    if values.shape[1] < t:
        values = nn.functional.pad(values, (0, t - values.shape[1]))
    return values[:, :t] * mask.to(values.dtype)


# ------------------------------------------------------------------------------------------- methods

@dataclass
class RawScores:
    """Scores for every pair of a batch: premise [B, P] and hypothesis [B, H], zero at padding."""

    premise: torch.Tensor
    hypothesis: torch.Tensor
    completeness_gap: torch.Tensor | None = None
    completeness_difference: torch.Tensor | None = None
    """Integrated gradients: Δ = f(x) − f(baseline) per pair [B] (float64)."""
    completeness_error: torch.Tensor | None = None
    """Integrated gradients: Σ attributions − Δ per pair [B] (float64), defined even where Δ = 0."""
    steps: torch.Tensor | None = None
    """Integrated gradients: the steps each pair used [B]."""
    layers: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)


def predicted_classes(model: MatchingModel, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities [B, K], predicted class [B]) in eval mode without gradients."""
    with torch.no_grad():
        probabilities = model.probabilities(model(batch).float())
    return probabilities, probabilities.argmax(dim=-1)


def _integrate(model: MatchingModel, batch: Batch, target: torch.Tensor, steps: int,
               at: str = DEFAULT_INPUT) -> RawScores:
    """One Captum IntegratedGradients pass at `steps` steps for every pair of the batch (module docstring)."""
    from captum.attr import IntegratedGradients

    premise, hypothesis = input_vectors(model, batch, at)
    baselines = removed_token_baseline(model, batch, premise, hypothesis, at)
    forward = InputForward(model, batch, at)
    b = len(batch)
    attributions = IntegratedGradients(forward).attribute(
        (premise, hypothesis), baselines=baselines, target=target, n_steps=steps, method="gausslegendre",
        internal_batch_size=max(b * DEFAULT_STEPS, MAX_ROWS_PER_PASS))
    with torch.no_grad():  # f(x) and f(baseline) in one pass (Captum's own convergence delta would take another)
        ends = forward(torch.cat([premise, baselines[0]]), torch.cat([hypothesis, baselines[1]]))
    rows = torch.arange(b)
    difference = (ends[:b][rows, target] - ends[b:][rows, target]).double()
    total = attributions[0].double().sum(dim=(1, 2)) + attributions[1].double().sum(dim=(1, 2))
    gap = (total - difference) / difference.abs()
    return RawScores(_to_token_scores(attributions[0].sum(-1), batch.premise_mask),
                     _to_token_scores(attributions[1].sum(-1), batch.hypothesis_mask), completeness_gap=gap,
                     completeness_difference=difference, completeness_error=total - difference,
                     steps=torch.full((b,), steps, dtype=torch.long))


def misses_tolerance(error: torch.Tensor, difference: torch.Tensor) -> torch.Tensor:
    """[B] bool: |Σ attributions − Δ| ≥ GAP_TOLERANCE · max(|Δ|, DIFFERENCE_FLOOR), i.e. the relative gap
    misses 0.05, or for |Δ| below the floor the absolute error misses 0.05 × the floor."""
    return ~(error.abs() < GAP_TOLERANCE * difference.abs().clamp(min=DIFFERENCE_FLOOR))


def integrated_gradients(model: MatchingModel, batch: Batch, target: torch.Tensor,
                         steps: int | None = None, at: str = DEFAULT_INPUT, start_steps: int = DEFAULT_STEPS) -> RawScores:
    """Captum IntegratedGradients at input `at` from the removed-token baseline (module docstring).

    `steps=None` (the default) starts at `start_steps` (`DEFAULT_STEPS`) and refines each pair that misses the
    tolerance by doubling its steps up to `MAX_STEPS` (only those pairs are recomputed); an integer is used
    as given."""
    if steps is not None:
        if steps < 1:
            raise ValueError(f"integrated gradients needs at least 1 step; got {steps}")
        return _integrate(model, batch, target, steps, at)
    result = _integrate(model, batch, target, start_steps, at)
    current = start_steps
    while current < MAX_STEPS:
        pending = misses_tolerance(result.completeness_error, result.completeness_difference).nonzero().flatten()
        if len(pending) == 0:
            break
        current = min(2 * current, MAX_STEPS)
        refined = _integrate(model, select_rows(batch, pending), target[pending], current, at)
        result.premise[pending] = refined.premise
        result.hypothesis[pending] = refined.hypothesis
        result.completeness_gap[pending] = refined.completeness_gap
        result.completeness_difference[pending] = refined.completeness_difference
        result.completeness_error[pending] = refined.completeness_error
        result.steps[pending] = current
    return result


def completeness_note(gap: float, difference: float, error: float, steps: int, refined: bool) -> str | None:
    """Why a pair's completeness gap should not be read as meeting 0.05, or None when it does (`error` is
    Σ attributions − Δ). `refined`: the steps came from the default refinement, not an explicit count."""
    if abs(difference) < DIFFERENCE_FLOOR:
        met = abs(error) < GAP_TOLERANCE * DIFFERENCE_FLOOR
        return (f"f(x) − f(baseline) = {difference:+.2e} in the target logit is below the floor of "
                f"{DIFFERENCE_FLOOR} logit, so the relative gap divides by almost nothing and is not meaningful; "
                f"the absolute error Σ attributions − Δ is {error:+.1e} logit "
                f"({'within' if met else 'NOT within'} {GAP_TOLERANCE} × the floor, {steps} steps)")
    if abs(gap) < GAP_TOLERANCE:
        return None
    if refined:
        return f"|gap| is still ≥ {GAP_TOLERANCE} at the refinement cap of {steps} steps"
    return f"|gap| ≥ {GAP_TOLERANCE} at the {steps} steps requested (no refinement with an explicit step count)"


def gradients(model: MatchingModel, batch: Batch, target: torch.Tensor,
              at: str = DEFAULT_INPUT) -> tuple[RawScores, RawScores]:
    """(`gradient` norm, `grad_x_input`) at input `at` from one backward pass through Captum's Saliency."""
    from captum.attr import Saliency

    premise, hypothesis = input_vectors(model, batch, at)
    base_premise, base_hypothesis = removed_token_baseline(model, batch, premise, hypothesis, at)
    premise, hypothesis = premise.requires_grad_(), hypothesis.requires_grad_()
    grads = Saliency(InputForward(model, batch, at)).attribute((premise, hypothesis), target=target, abs=False)
    norm = RawScores(_to_token_scores(grads[0].norm(dim=-1), batch.premise_mask),
                     _to_token_scores(grads[1].norm(dim=-1), batch.hypothesis_mask))
    times_input = RawScores(_to_token_scores((grads[0] * (premise - base_premise)).sum(-1), batch.premise_mask),
                            _to_token_scores((grads[1] * (hypothesis - base_hypothesis)).sum(-1), batch.hypothesis_mask))
    return norm, times_input


def attention_scores(trace: Trace, premise_mask: torch.Tensor, hypothesis_mask: torch.Tensor) -> RawScores | None:
    """The trace's alignments reduced by `ATTENTION_RULE`; None when the model traced none of them."""
    masks = {"premise": premise_mask, "hypothesis": hypothesis_mask}
    alignments = [a for a in trace.of_type(Alignment).values() if a.kind != "similarity"]
    cross = [a for a in alignments if a.rows != a.cols]
    chosen: list[tuple[str, int, str, torch.Tensor]] = []  # (kind label, layer, receiving sentence, weights)
    if cross:
        chosen = [("cross-attention", a.layer, a.cols, a.weights) for a in cross]
    elif alignments:
        chosen = [("self-attention", a.layer, a.cols, a.weights) for a in alignments]
    else:
        chosen = [("memory keys", k.layer, k.tokens, k.weights) for k in trace.of_type(MemoryKeys).values()]
    if not chosen:
        return None
    by_layer: dict[str, dict[str, torch.Tensor]] = {}
    for label, layer, sentence, weights in chosen:
        rows_sentence = "premise" if sentence == "hypothesis" else "hypothesis"
        rows_mask = masks[sentence if label != "cross-attention" else rows_sentence]
        weights = weights.detach().float()
        rows_mask = _grid_mask(rows_mask, weights.shape[1]).to(weights.dtype)
        received = (weights * rows_mask.unsqueeze(-1)).sum(dim=1)  # [B, cols]
        by_layer.setdefault(f"{label} layer {layer}", {})[sentence] = _to_token_scores(received, masks[sentence])
    layers = {name: (sides.get("premise", torch.zeros_like(premise_mask, dtype=torch.float32)),
                     sides.get("hypothesis", torch.zeros_like(hypothesis_mask, dtype=torch.float32)))
              for name, sides in by_layer.items()}

    def average(sentence: str) -> torch.Tensor:
        present = [sides[sentence] for sides in by_layer.values() if sentence in sides]
        mask = masks[sentence]
        return torch.stack(present).mean(0) if present else torch.zeros_like(mask, dtype=torch.float32)

    return RawScores(average("premise"), average("hypothesis"), layers=layers)


def delete_tokens(sentence: SentenceAnalysis, keep: Sequence[bool]) -> SentenceAnalysis:
    """The sentence with the tokens where `keep` is False deleted (shortened, not replaced).

    Removal is the same for every method and for ERASER's metrics: the pair is re-featurized from what
    remains, so char ids and POS tags travel with their tokens (tags are not re-predicted), exact-match
    flags are recomputed on the remaining tokens, and a sentence left with no tokens becomes the
    featurizer's single UNK token for an empty sentence.
    """
    if len(keep) != len(sentence):
        raise ValueError(f"keep has {len(keep)} flags for a sentence of {len(sentence)} tokens")
    kept = [i for i, flag in enumerate(keep) if flag]
    return SentenceAnalysis(tuple(sentence.tokens[i] for i in kept), tuple(sentence.tags[i] for i in kept),
                            tuple(sentence.lemmas[i] for i in kept))


def with_tokens_kept(item, keep_premise: Sequence[bool], keep_hypothesis: Sequence[bool]):
    """An `AnalysedPair` with the tokens whose flag is False deleted from each side (see `delete_tokens`)."""
    return replace(item, premise=delete_tokens(item.premise, keep_premise),
                   hypothesis=delete_tokens(item.hypothesis, keep_hypothesis))


@dataclass
class DeletionSource:
    """A sample encoded once, with each pair's token-match matrix, from which the batch of any deletion of
    its tokens is built by indexing (`deleted_batch`) instead of re-featurizing every variant: thousands
    of ERASER and occlusion variants per model then cost tensor gathers, not Python featurizing."""

    batch: Batch
    """Every pair of the sample, [N, P] (cut to the featurizer's limits)."""
    matches: torch.Tensor
    """[N, P, H] bool: premise token i and hypothesis token j match under the featurizer's exact-match rule."""
    widths: tuple[int, int] | None
    """(premise, hypothesis) width of every batch when the featurizer pads to its cut-offs, else None."""


def deletion_source(featurizer, items: Sequence) -> DeletionSource:
    """The `DeletionSource` of `items` (`AnalysedPair`s, cut to the featurizer's limits here)."""
    items = [cut_to_featurizer(item, featurizer) for item in items]
    batch = featurizer.encode(items)
    s = featurizer.settings
    matches = torch.zeros(len(items), batch.premise_ids.shape[1], batch.hypothesis_ids.shape[1], dtype=torch.bool)
    for row, item in enumerate(items):
        p, h = item.premise, item.hypothesis
        if len(p) and len(h):
            matches[row, :len(p), :len(h)] = torch.tensor(match_matrix(p.tokens, p.lemmas, h.tokens, h.lemmas,
                                                                       s.exact_match_rule), dtype=torch.bool)
    widths = (s.max_premise_len, s.max_hypothesis_len) if s.pad_to_cutoff else None
    return DeletionSource(batch, matches, widths)


def _kept_side(ids: torch.Tensor, chars: torch.Tensor, pos: torch.Tensor, flags: torch.Tensor, keep: torch.Tensor,
               width: int | None) -> tuple[torch.Tensor, ...]:
    """One side of `deleted_batch`: the kept tokens moved left in order, an empty side one UNK token."""
    # V variants, T source length, W output width, C chars per word
    counts = keep.sum(1)
    width = width or max(1, int(counts.max()))
    v = keep.shape[0]
    variant, token = keep.nonzero(as_tuple=True)
    slot = (keep.cumsum(1) - 1)[variant, token]
    out_ids = torch.zeros(v, width, dtype=ids.dtype)
    out_mask = torch.zeros(v, width, dtype=torch.bool)
    out_chars = torch.zeros(v, width, chars.shape[-1], dtype=chars.dtype)
    out_pos = torch.zeros(v, width, dtype=pos.dtype)
    out_flags = torch.zeros(v, width, dtype=flags.dtype)
    out_ids[variant, slot] = ids[variant, token]
    out_mask[variant, slot] = True
    out_chars[variant, slot] = chars[variant, token]
    out_pos[variant, slot] = pos[variant, token]
    out_flags[variant, slot] = flags[variant, token]
    empty = counts == 0
    out_ids[empty, 0] = UNK_ID
    out_mask[empty, 0] = True
    return out_ids, out_mask, out_chars, out_pos, out_flags


def deleted_batch(source: DeletionSource, rows: torch.Tensor, keep_premise: torch.Tensor,
                  keep_hypothesis: torch.Tensor) -> Batch:
    """The batch `featurizer.encode` gives for pair `rows[v]` of the source with the tokens where
    `keep_premise[v]` / `keep_hypothesis[v]` is False deleted (`delete_tokens`): kept tokens keep their
    ids, characters and POS, exact-match flags are recomputed from the kept tokens, a side left empty is
    one UNK token. Keep masks are [V, P] / [V, H] over the source's widths (False at padding is implied)."""
    b = source.batch
    keep_p = keep_premise & b.premise_mask[rows]
    keep_h = keep_hypothesis & b.hypothesis_mask[rows]
    matches = source.matches[rows]  # [V, P, H]
    flags_p = (matches & keep_h.unsqueeze(1)).any(2).to(b.premise_exact_match.dtype)
    flags_h = (matches & keep_p.unsqueeze(2)).any(1).to(b.hypothesis_exact_match.dtype)
    widths = source.widths or (None, None)
    p_ids, p_mask, p_chars, p_pos, p_flags = _kept_side(b.premise_ids[rows], b.premise_chars[rows],
                                                        b.premise_pos[rows], flags_p, keep_p, widths[0])
    h_ids, h_mask, h_chars, h_pos, h_flags = _kept_side(b.hypothesis_ids[rows], b.hypothesis_chars[rows],
                                                        b.hypothesis_pos[rows], flags_h, keep_h, widths[1])
    return Batch(premise_ids=p_ids, hypothesis_ids=h_ids, premise_mask=p_mask, hypothesis_mask=h_mask,
                 premise_chars=p_chars, hypothesis_chars=h_chars, premise_pos=p_pos, hypothesis_pos=h_pos,
                 premise_exact_match=p_flags, hypothesis_exact_match=h_flags)


def cut_to_featurizer(item, featurizer):
    """The pair as the model reads it: each side cut to the featurizer's maximum length."""
    s = featurizer.settings
    return replace(item, premise=cut_sentence(item.premise, s.max_premise_len),
                   hypothesis=cut_sentence(item.hypothesis, s.max_hypothesis_len))


def target_probabilities(model: MatchingModel, featurizer, items: Sequence, target: int,
                         chunk: int = 256) -> torch.Tensor:
    """p(target | pair) for every pair of `items` (re-featurized), in chunks of `chunk` pairs."""
    out = []
    with torch.no_grad():
        for start in range(0, len(items), chunk):
            batch = featurizer.encode(items[start:start + chunk])
            out.append(model.probabilities(model(batch).float())[:, target])
    return torch.cat(out)


def occlusion(model: MatchingModel, featurizer, item, target: int) -> tuple[list[float], list[float]]:
    """Leave-one-out for one (cut) analysed pair: p(target | x) − p(target | x without token i), every
    variant in one batch. Returns (premise scores, hypothesis scores)."""
    item = cut_to_featurizer(item, featurizer)
    p, h = len(item.premise), len(item.hypothesis)
    variants = [item]
    for i in range(p):
        variants.append(with_tokens_kept(item, [j != i for j in range(p)], [True] * h))
    for i in range(h):
        variants.append(with_tokens_kept(item, [True] * p, [j != i for j in range(h)]))
    probabilities = target_probabilities(model, featurizer, variants, target)
    drops = (probabilities[0] - probabilities[1:]).tolist()
    return drops[:p], drops[p:]


# ------------------------------------------------------------------------------------------ one pair

def explain_pair(model: MatchingModel, featurizer, item, methods: Sequence[str] = METHODS,
                 target: int | None = None, steps: int | None = None, at: str = DEFAULT_INPUT) -> dict[str, TokenScores]:
    """Every requested method's `TokenScores` for one `AnalysedPair`, against `target` (default: the
    predicted class). `steps` None refines integrated gradients adaptively (`integrated_gradients`); `at`
    says where gradients and integrated gradients attribute (`ATTRIBUTION_INPUTS`). The model must be in
    eval mode (dropout off)."""
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown attribution method(s) {unknown}; known: {list(METHODS)}")
    input_module(model, at)  # an unknown `at` fails before any work
    model.eval()
    batch = featurizer.encode([item])
    probabilities, predicted = predicted_classes(model, batch)
    k = probabilities.shape[1]
    chosen = int(predicted[0]) if target is None else int(target)
    if not 0 <= chosen < k:
        raise ValueError(f"target class {chosen} is out of range for a model with {k} classes")
    target_tensor = torch.tensor([chosen])
    p_tokens, h_tokens = batch.premise_tokens[0], batch.hypothesis_tokens[0]
    p_len, h_len = len(p_tokens), len(h_tokens)

    def scores(method: str, raw: RawScores, note: str = "") -> TokenScores:
        gap = None if raw.completeness_gap is None else float(raw.completeness_gap[0])
        layers = {name: (p[0, :p_len].tolist(), h[0, :h_len].tolist()) for name, (p, h) in raw.layers.items()}
        return TokenScores(method, list(p_tokens), list(h_tokens), raw.premise[0, :p_len].tolist(),
                           raw.hypothesis[0, :h_len].tolist(), chosen, int(predicted[0]), completeness_gap=gap,
                           layers=layers, note=note)

    out: dict[str, TokenScores] = {}
    gradient_pair: tuple[RawScores, RawScores] | None = None  # one backward pass serves both gradient methods
    for method in methods:
        if method == "integrated_gradients":
            raw = integrated_gradients(model, batch, target_tensor, steps, at)
            used = int(raw.steps[0])
            how = ("as requested" if steps is not None else
                   f"refined from {DEFAULT_STEPS}, cap {MAX_STEPS}" if used > DEFAULT_STEPS else "no refinement needed")
            ig = scores(method, raw, f"{used} Gauss–Legendre steps ({how}) {INPUT_NOTES[at]}; signed")
            ig.steps = used
            ig.completeness_difference = float(raw.completeness_difference[0])
            ig.completeness_note = completeness_note(ig.completeness_gap, ig.completeness_difference,
                                                     float(raw.completeness_error[0]), used, refined=steps is None)
            out[method] = ig
        elif method in ("gradient", "grad_x_input"):
            gradient_pair = gradient_pair or gradients(model, batch, target_tensor, at)
            norm, times_input = gradient_pair
            out[method] = scores(method, norm if method == "gradient" else times_input,
                                 f"L2 norm of the gradient at the {at.replace('_', ' ')}; unsigned" if method == "gradient"
                                 else f"gradient × (input − removed token) at the {at.replace('_', ' ')}; signed")
        elif method == "occlusion":
            premise_drop, hypothesis_drop = occlusion(model, featurizer, item, chosen)
            out[method] = TokenScores(method, list(p_tokens), list(h_tokens), premise_drop, hypothesis_drop,
                                      chosen, int(predicted[0]), note="probability drop when the token is deleted; signed")
        elif method == "attention":
            with torch.no_grad():
                _, trace = model(batch, trace=True)
            raw = attention_scores(trace, batch.premise_mask, batch.hypothesis_mask)
            if raw is not None:
                out[method] = scores(method, raw, ATTENTION_RULE)
    return out
