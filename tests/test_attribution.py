"""Attribution (issue 14): completeness of integrated gradients on every config, closed forms on a hand-built
linear model, occlusion as real deletion, zero attribution at padding, and the faithfulness / agreement /
plausibility metrics on hand-made numbers."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import pytest
import torch
from torch import nn

from nlivis.analysis.attribution import (ATTRIBUTION_INPUTS, DEFAULT_STEPS, DIFFERENCE_FLOOR, GAP_TOLERANCE,
                                         MAX_STEPS, METHODS, attention_scores, deleted_batch, deletion_source,
                                         explain_pair, gradients, input_vectors, integrated_gradients, occlusion,
                                         predicted_classes, with_tokens_kept)
from nlivis.analysis.faithfulness import (BINS, RANDOM_PERMUTATIONS, agreement, aopc, average_precision,
                                          bootstrap_interval, eraser_variants, f1_at_k, kendall_tau, plausibility,
                                          random_scores, rationale_size, ranking, summarize)
from nlivis.data.highlights import (Highlight, find_highlights_file, highlights_by_pair,
                                    read_esnli_highlights, token_labels)
from nlivis.data.records import NLI_LABELS, DataFormatError, Pair
from nlivis.features.sentences import SentenceAnalysis
from nlivis.features.batch import Batch
from nlivis.features.dataset import AnalysedPair
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import FeatureSettings
from nlivis.features.vocab import CharVocabulary, Vocabulary
from nlivis.models.base import MatchingModel, ModelConfig
from nlivis.models.families import SHIPPED_FAMILIES
from nlivis.models.layers.embedding import TokenFeatures
from nlivis.workflows.faithfulness import compute_records, method_records
from tests.test_models import CONFIG_NAMES, batch_for, project_config, tiny_model

# ------------------------------------------------------------------------------------------ fixtures

WORDS = ["a", "man", "plays", "guitar", "person", "sleeps", "music", "the", "."]


def analysed(tokens: list[str]) -> SentenceAnalysis:
    return SentenceAnalysis(tuple(tokens), tuple("NN" for _ in tokens), tuple(t.lower() for t in tokens))


def pair(premise: list[str], hypothesis: list[str], pair_id: str = "p1", line: int | None = None) -> AnalysedPair:
    return AnalysedPair(Pair(id=pair_id, premise=" ".join(premise), hypothesis=" ".join(hypothesis), line=line),
                        analysed(premise), analysed(hypothesis))


def featurizer_for(vocab_size: int | None = None, settings: FeatureSettings | None = None) -> Featurizer:
    vocab = Vocabulary(["<PAD>", "<UNK>", *WORDS])
    chars = CharVocabulary(["<PAD>", "<UNK>", *sorted({c for w in WORDS for c in w})])
    return Featurizer(vocab, chars, settings or FeatureSettings(), NLI_LABELS)


PAIR = pair(["a", "man", "plays", "the", "guitar", "."], ["a", "man", "plays", "music", "."])


@dataclass
class LinearConfig(ModelConfig):
    pass


class LinearBagModel(MatchingModel):
    """logits = W_p · Σ_premise word vectors + W_h · Σ_hypothesis word vectors + b: every method has a
    closed form."""

    config_class = LinearConfig

    def __init__(self, config: LinearConfig):
        super().__init__(config)
        self.features = TokenFeatures(config.vocab_size, config.word_dim, freeze_words=False)
        self.premise_weights = nn.Linear(config.word_dim, config.num_classes)
        self.hypothesis_weights = nn.Linear(config.word_dim, config.num_classes, bias=False)

    def match(self, batch: Batch, trace) -> torch.Tensor:
        # B batch, P/H lengths, d word dim, K classes
        p = self.features(batch.premise_ids, batch.premise_chars, batch.premise_pos, batch.premise_exact_match)
        h = self.features(batch.hypothesis_ids, batch.hypothesis_chars, batch.hypothesis_pos,
                          batch.hypothesis_exact_match)
        p_sum = (p * batch.premise_mask.unsqueeze(-1)).sum(1)  # [B, d]
        h_sum = (h * batch.hypothesis_mask.unsqueeze(-1)).sum(1)
        return self.premise_weights(p_sum) + self.hypothesis_weights(h_sum)  # [B, K]


def linear_model() -> LinearBagModel:
    torch.manual_seed(0)
    model = LinearBagModel(LinearConfig(vocab_size=len(WORDS) + 2, word_dim=6, num_classes=3)).eval()
    with torch.no_grad():
        model.features.word_embedding.weight[0].zero_()
    return model


class SteepModel(LinearBagModel):
    """The linear bag model's logits through a steep sigmoid centred halfway along the integration path, so
    the integrand of integrated gradients is a narrow bump that 50 Gauss–Legendre steps resolve badly."""

    def __init__(self, config: LinearConfig, sharpness: float):
        super().__init__(config)
        self.sharpness = sharpness
        self.register_buffer("centre", torch.zeros(config.num_classes))

    def match(self, batch: Batch, trace) -> torch.Tensor:
        # B batch, K classes
        return 4 * torch.sigmoid(self.sharpness * (super().match(batch, trace) - self.centre))  # [B, K]


def steep_model(sharpness: float = 150.0) -> SteepModel:
    torch.manual_seed(0)
    model = SteepModel(LinearConfig(vocab_size=len(WORDS) + 2, word_dim=6, num_classes=3), sharpness).eval()
    with torch.no_grad():
        model.features.word_embedding.weight[0].zero_()
        batch = featurizer_for().encode([PAIR])
        model.sharpness, linear = 1.0, LinearBagModel.match(model, batch, None)[0]
        baseline = model.premise_weights.bias  # the zero word vectors leave only the bias
        model.centre.copy_((linear + baseline) / 2)
        model.sharpness = sharpness
    return model


@pytest.fixture(params=CONFIG_NAMES)
def config_name(request) -> str:
    return request.param


# ------------------------------------------------------------------------------------ integrated gradients

def removed_everywhere(batch: Batch, at: str) -> Batch:
    """The baseline pair built independently of the module: every real token's word id set to PAD (whose row
    is the zero vector) and, for the token features, its characters, POS and exact-match flag too."""
    blank = dict(premise_ids=torch.zeros_like(batch.premise_ids), hypothesis_ids=torch.zeros_like(batch.hypothesis_ids))
    if at == "token_features":
        for side in ("premise", "hypothesis"):
            for part in ("chars", "pos", "exact_match"):
                blank[f"{side}_{part}"] = torch.zeros_like(getattr(batch, f"{side}_{part}"))
            pieces = getattr(batch, f"{side}_pieces")  # word pieces: a removed word's are [MASK], padding stays
            blank[f"{side}_pieces"] = torch.where(pieces > 0, torch.full_like(pieces, 103), pieces)
    return replace(batch, **blank)


@pytest.mark.parametrize("at", ATTRIBUTION_INPUTS)
def test_integrated_gradients_are_complete_on_every_config(config_name, at):
    """Σ attributions = f(x) − f(baseline) in the target logit, with the baseline built independently
    (`removed_everywhere`). Tiny random models are far from smooth (max pooling and ReLU kinks on
    target-logit differences as small as 1e-4): the default call refines the steps, and the error must be
    below 5 % of |Δ| or, where |Δ| is below the 0.01-logit floor, of the floor."""
    model = tiny_model(config_name).eval()
    batch = batch_for(model)
    if at == "word_vectors" and batch.premise_pieces is not None and model.name == "minilm":
        pytest.skip("no batch of ids builds MiniLM's zero-vector baseline independently (every piece row, PAD's "
                    "included, is a learned vector); its token-features case checks the same machinery")
    _, predicted = predicted_classes(model, batch)
    raw = integrated_gradients(model, batch, predicted, at=at)
    rows = torch.arange(len(batch))
    with torch.no_grad():
        full = model(batch)[rows, predicted]
        baseline = model(removed_everywhere(batch, at))[rows, predicted]
    difference = full - baseline
    error = raw.premise.sum(1) + raw.hypothesis.sum(1) - difference
    bound = 0.05 * difference.abs().clamp(min=0.01)  # written out, not taken from the module
    assert (error.abs() < bound).all(), f"{config_name}: Σ attributions − Δ = {error.tolist()}, Δ = {difference.tolist()}"
    assert torch.isfinite(raw.completeness_gap).all()
    assert (raw.premise.abs().sum(1) > 0).all() and (raw.hypothesis.abs().sum(1) > 0).all()


SHIPPED = list(SHIPPED_FAMILIES)


SHIPPED_SAMPLE = 200
"""SNLI dev pairs (seed 1, the `faithfulness --sample 200` draw) that bench/ig_completeness.py reports on, as in the
README."""
SHIPPED_STRIDE = 5
"""The shipped-model check takes every fifth pair of that draw (40 pairs, spread over the whole split, still in
split order): the same per-pair assertions on a fifth of the integrated-gradient passes; the bench keeps the full
200-pair table."""


@pytest.mark.slow
@pytest.mark.parametrize("family", SHIPPED)
def test_shipped_models_meet_the_completeness_target_by_default(family, shared_data):
    """Every checked pair (every fifth of the bench's 200-pair draw, plus two typed ones) meets |gap| < 0.05 with the
    default refinement, or has |f(x) − f(baseline)| below the floor and a note saying that its relative gap is not
    meaningful."""
    from pathlib import Path

    from nlivis.analysis.attribution import cut_to_featurizer
    from nlivis.analysis.faithfulness import sample_items
    from nlivis.features.dataset import load_split_analysed
    from nlivis.inference import load_checkpoint
    from nlivis.data.protocols import resolve_split

    folder = Path(__file__).resolve().parent.parent / "checkpoints" / f"{family}-snli-small"
    loaded = load_checkpoint(folder)
    items, _ = load_split_analysed(resolve_split("snli", "dev"), shared_data / "snli" / "esnli_tokenized")
    # batches of four checked pairs, as bench/ig_completeness.py batches its draw, then the two typed pairs
    items = [*sample_items(items, SHIPPED_SAMPLE, seed=1)[::SHIPPED_STRIDE],
             pair(["a", "man", "plays", "the", "guitar", "."], ["a", "man", "sleeps", "."]),
             pair(["the", "man", "plays", "music", "."], ["a", "person", "plays", "."])]
    items = [cut_to_featurizer(item, loaded.featurizer) for item in items]
    for start in range(0, len(items), 4):
        batch = loaded.featurizer.encode(items[start:start + 4])
        _, predicted = predicted_classes(loaded.model, batch)
        raw = integrated_gradients(loaded.model, batch, predicted)
        for row in range(len(batch)):
            if abs(float(raw.completeness_difference[row])) < DIFFERENCE_FLOOR:
                explained = explain_pair(loaded.model, loaded.featurizer, items[start + row],
                                         ["integrated_gradients"])["integrated_gradients"]
                assert "below the floor" in explained.completeness_note, explained.completeness_note
                assert "not meaningful" in explained.completeness_note
            else:
                assert abs(float(raw.completeness_gap[row])) < GAP_TOLERANCE, \
                    f"{family}, {items[start + row].pair.id}: gap {float(raw.completeness_gap[row])} at {int(raw.steps[row])} steps"


def test_refinement_triggers_and_closes_the_gap_that_the_default_steps_leave():
    model, featurizer = steep_model(), featurizer_for()
    batch = featurizer.encode([PAIR])
    target = torch.tensor([0])
    fixed = integrated_gradients(model, batch, target, steps=DEFAULT_STEPS)
    assert abs(float(fixed.completeness_gap[0])) >= GAP_TOLERANCE  # the case needs refinement
    assert abs(float(fixed.completeness_difference[0])) > DIFFERENCE_FLOOR
    assert int(fixed.steps[0]) == DEFAULT_STEPS
    refined = integrated_gradients(model, batch, target)
    assert DEFAULT_STEPS < int(refined.steps[0]) <= MAX_STEPS
    assert abs(float(refined.completeness_gap[0])) < GAP_TOLERANCE < abs(float(fixed.completeness_gap[0]))
    # the same answer as asking for those steps outright: refinement recomputes, it does not patch
    again = integrated_gradients(model, batch, target, steps=int(refined.steps[0]))
    torch.testing.assert_close(refined.premise, again.premise)
    # in a batch, only the pair that misses is refined; the other (class 1 meets 0.05 at 50 steps) keeps its
    # 50-step scores
    both = integrated_gradients(model, featurizer.encode([PAIR, PAIR]), torch.tensor([0, 1]))
    alone = integrated_gradients(model, batch, torch.tensor([1]), steps=DEFAULT_STEPS)
    assert both.steps.tolist() == [int(refined.steps[0]), DEFAULT_STEPS]
    torch.testing.assert_close(both.premise[1], alone.premise[0])
    torch.testing.assert_close(both.premise[0], refined.premise[0])
    out = explain_pair(model, featurizer, PAIR, ["integrated_gradients"], target=0)["integrated_gradients"]
    assert out.steps == int(refined.steps[0]) and out.completeness_note is None
    assert f"refined from {DEFAULT_STEPS}" in out.note
    explicit = explain_pair(model, featurizer, PAIR, ["integrated_gradients"], target=0, steps=DEFAULT_STEPS)
    assert explicit["integrated_gradients"].steps == DEFAULT_STEPS
    assert "no refinement" in explicit["integrated_gradients"].completeness_note


def test_a_difference_below_the_floor_is_reported_not_hidden():
    """A model whose target logit barely moves: the relative gap is not meaningful and the note says so."""
    model, featurizer = linear_model(), featurizer_for()
    with torch.no_grad():
        model.premise_weights.weight.mul_(1e-5)
        model.hypothesis_weights.weight.mul_(1e-5)
    out = explain_pair(model, featurizer, PAIR, ["integrated_gradients"], target=1)["integrated_gradients"]
    assert abs(out.completeness_difference) < DIFFERENCE_FLOOR
    assert "below the floor" in out.completeness_note and "not meaningful" in out.completeness_note
    assert "within" in out.completeness_note and "NOT within" not in out.completeness_note


def test_integrated_gradients_difference_matches_a_real_zero_vector_forward():
    model = linear_model()
    featurizer = featurizer_for()
    batch = featurizer.encode([PAIR])
    target = torch.tensor([2])
    raw = integrated_gradients(model, batch, target)
    with torch.no_grad():
        full = model(batch)[0, 2]
        # the baseline built independently: every word id set to PAD, whose row is the zero vector
        baseline = model(replace(batch, premise_ids=torch.zeros_like(batch.premise_ids),
                                 hypothesis_ids=torch.zeros_like(batch.hypothesis_ids)))[0, 2]
    torch.testing.assert_close(raw.premise.sum() + raw.hypothesis.sum(), (full - baseline).float(), atol=1e-5, rtol=1e-5)


# ------------------------------------------------------------------------------- closed forms (linear)

def test_linear_model_attributions_equal_their_closed_form():
    model = linear_model()
    featurizer = featurizer_for()
    target = 1
    out = explain_pair(model, featurizer, PAIR, ["integrated_gradients", "gradient", "grad_x_input"], target=target)
    table = model.features.word_embedding.weight.detach()
    w_p, w_h = model.premise_weights.weight[target].detach(), model.hypothesis_weights.weight[target].detach()
    p_ids = featurizer.vocab.encode(PAIR.premise.tokens)
    h_ids = featurizer.vocab.encode(PAIR.hypothesis.tokens)
    expected_p = [float(table[i] @ w_p) for i in p_ids]  # e_i · w: grad × input = IG for a linear model
    expected_h = [float(table[i] @ w_h) for i in h_ids]
    for method in ("integrated_gradients", "grad_x_input"):
        assert out[method].premise_scores == pytest.approx(expected_p, abs=1e-5)
        assert out[method].hypothesis_scores == pytest.approx(expected_h, abs=1e-5)
    assert out["gradient"].premise_scores == pytest.approx([float(w_p.norm())] * len(p_ids), abs=1e-5)
    assert out["gradient"].hypothesis_scores == pytest.approx([float(w_h.norm())] * len(h_ids), abs=1e-5)
    assert out["integrated_gradients"].completeness_gap == pytest.approx(0.0, abs=1e-5)
    assert out["integrated_gradients"].target == target


class ExactMatchModel(LinearBagModel):
    """A bag model over the whole token representation (word vector, POS one-hot, exact-match flag) whose
    weights are zero everywhere but on the exact-match flag: the prediction rides on a non-word feature."""

    def __init__(self, config: LinearConfig):
        super().__init__(config)
        self.features = TokenFeatures(config.vocab_size, config.word_dim, freeze_words=False, use_pos=True,
                                      use_exact_match=True)
        self.premise_weights = nn.Linear(self.features.output_dim, config.num_classes)
        self.hypothesis_weights = nn.Linear(self.features.output_dim, config.num_classes, bias=False)
        with torch.no_grad():
            self.features.word_embedding.weight.normal_()
            self.features.word_embedding.weight[0].zero_()
            for layer in (self.premise_weights, self.hypothesis_weights):
                layer.weight.zero_()
                layer.weight[0, -1] = 3.0  # exact match → class 0
            self.premise_weights.bias.zero_()


def test_a_token_whose_non_word_features_carry_the_prediction_is_attributed_at_the_token_features():
    """Only the exact-match flag moves the logit. At the word vectors nothing can be found (every score 0,
    the old behaviour); at the token features integrated gradients and grad × input give each matched token
    the flag's weight, 3 logits, the rest 0, and the scores add up to the logit drop of removing every token's
    features."""
    model = ExactMatchModel(LinearConfig(vocab_size=len(WORDS) + 2, word_dim=6, num_classes=3)).eval()
    featurizer = featurizer_for()
    item = pair(["a", "man", "plays", "guitar"], ["a", "person", "sleeps"])  # "a" is in both: flagged twice
    methods = ["integrated_gradients", "grad_x_input", "gradient"]
    words = explain_pair(model, featurizer, item, methods, target=0, at="word_vectors")
    tokens = explain_pair(model, featurizer, item, methods, target=0)  # the default: token features
    for method in ("integrated_gradients", "grad_x_input", "gradient"):
        assert words[method].scores == pytest.approx([0.0] * 7, abs=1e-6)
    for method in ("integrated_gradients", "grad_x_input"):
        assert tokens[method].premise_scores == pytest.approx([3.0, 0.0, 0.0, 0.0], abs=1e-4)
        assert tokens[method].hypothesis_scores == pytest.approx([3.0, 0.0, 0.0], abs=1e-4)
    assert tokens["gradient"].premise_scores == pytest.approx([3.0] * 4, abs=1e-4)  # ∂logit/∂flag, at every token
    assert tokens["integrated_gradients"].completeness_difference == pytest.approx(6.0, abs=1e-4)
    with pytest.raises(ValueError, match="unknown attribution input"):
        explain_pair(model, featurizer, item, ["gradient"], at="characters")


def test_gcnn_char_composer_is_part_of_the_attributed_token_representation():
    """GCNN concatenates its char composer's vector after `features`: the hooked module must output that
    concatenation (the width its context layer reads), or char features would escape attribution."""
    model = tiny_model("gcnn-char").eval()
    batch = batch_for(model)
    premise, hypothesis = input_vectors(model, batch, "token_features")
    assert premise.shape[-1] == model.features.output_dim + model.char_composer.output_dim
    assert input_vectors(model, batch, "word_vectors")[0].shape[-1] == model.config.word_dim


def test_linear_model_occlusion_is_the_softmax_change_of_dropping_a_vector():
    model = linear_model()
    featurizer = featurizer_for()
    with torch.no_grad():
        logits = model(featurizer.encode([PAIR]))[0]
    target = int(logits.argmax())
    premise_scores, hypothesis_scores = occlusion(model, featurizer, PAIR, target)
    table = model.features.word_embedding.weight.detach()
    for token, score in zip(PAIR.hypothesis.tokens, hypothesis_scores):
        vector = table[featurizer.vocab.encode([token])[0]]
        without = logits - model.hypothesis_weights.weight.detach() @ vector
        expected = torch.softmax(logits, -1)[target] - torch.softmax(without, -1)[target]
        assert score == pytest.approx(float(expected), abs=1e-5)
    assert len(premise_scores) == len(PAIR.premise)


def test_a_model_without_alignments_gives_no_attention_scores():
    out = explain_pair(linear_model(), featurizer_for(), PAIR, ["attention"])
    assert "attention" not in out


# --------------------------------------------------------------------------------- occlusion = deletion

@pytest.mark.parametrize("config_name", ["esan", "diin", "gcnn"])
def test_occlusion_equals_the_probability_change_of_really_deleting_the_token(config_name):
    options = dict(project_config(config_name)["model"])
    from nlivis.models.registry import build, model_class
    options.update(model_class(options["name"]).tiny_overrides)
    options.update(vocab_size=len(WORDS) + 2)
    torch.manual_seed(1)
    model = build(options).eval()
    featurizer = featurizer_for(settings=FeatureSettings(pad_to_cutoff=False))
    with torch.no_grad():
        full = model.probabilities(model(featurizer.encode([PAIR])))[0]
    target = int(full.argmax())
    premise_scores, hypothesis_scores = occlusion(model, featurizer, PAIR, target)
    for side, scores in (("premise", premise_scores), ("hypothesis", hypothesis_scores)):
        tokens = list(getattr(PAIR, side).tokens)
        for i, score in enumerate(scores):
            shorter = tokens[:i] + tokens[i + 1:]
            # an independently built pair: the sentence typed without the token (exact match recomputed)
            other = pair(shorter, list(PAIR.hypothesis.tokens)) if side == "premise" else \
                pair(list(PAIR.premise.tokens), shorter)
            with torch.no_grad():
                deleted = model.probabilities(model(featurizer.encode([other])))[0, target]
            assert score == pytest.approx(float(full[target] - deleted), abs=1e-5)


# ------------------------------------------------------------------------------------------ padding

def test_padding_gets_zero_attribution_and_changes_no_score(config_name):
    model = tiny_model(config_name).eval()
    tight = batch_for(model)
    padded = batch_for(model, pad_premise_to=8, pad_hypothesis_to=6)
    _, predicted = predicted_classes(model, tight)
    for name, compute in (("integrated_gradients", lambda b: integrated_gradients(model, b, predicted)),
                          ("gradient", lambda b: gradients(model, b, predicted)[0]),
                          ("grad_x_input", lambda b: gradients(model, b, predicted)[1])):
        a, b = compute(tight), compute(padded)
        for side, mask in (("premise", padded.premise_mask), ("hypothesis", padded.hypothesis_mask)):
            scores = getattr(b, side)
            assert (scores[~mask] == 0).all(), f"{name}: nonzero {side} score at padding"
            width = getattr(a, side).shape[1]
            torch.testing.assert_close(scores[:, :width], getattr(a, side), atol=2e-4, rtol=1e-3)
    with torch.no_grad():
        _, trace = model(padded, trace=True)
    attention = attention_scores(trace, padded.premise_mask, padded.hypothesis_mask)
    if attention is not None:
        assert (attention.premise[~padded.premise_mask] == 0).all()
        assert (attention.hypothesis[~padded.hypothesis_mask] == 0).all()


def test_every_method_returns_one_score_per_token_on_a_real_model():
    from nlivis.models.registry import build, model_class
    options = dict(project_config("esan")["model"])
    options.update(model_class("esan").tiny_overrides, vocab_size=len(WORDS) + 2)
    model = build(options).eval()
    out = explain_pair(model, featurizer_for(), PAIR)
    assert set(out) == set(METHODS)
    for scores in out.values():
        assert len(scores.premise_scores) == len(PAIR.premise)
        assert len(scores.hypothesis_scores) == len(PAIR.hypothesis)
    assert list(out["attention"].layers) == ["cross-attention layer 1", "cross-attention layer 2"]
    with pytest.raises(ValueError, match="unknown attribution method"):
        explain_pair(model, featurizer_for(), PAIR, ["saliency"])
    with pytest.raises(ValueError, match="out of range"):
        explain_pair(model, featurizer_for(), PAIR, ["gradient"], target=7)


# ---------------------------------------------------------------------------------- metrics by hand

def test_rationale_sizes_and_ranking():
    assert [rationale_size(20, b) for b in BINS] == [1, 1, 2, 4, 10]
    assert rationale_size(3, 0.5) == 2 and rationale_size(1, 0.5) == 1
    assert ranking([0.1, 0.5, 0.5, -1.0]) == [1, 2, 0, 3]


def test_aopc_is_the_mean_drop():
    assert aopc([0.5, 0.25, 0.0, 0.25, 0.0]) == pytest.approx(0.2)


def test_eraser_variants_remove_and_keep_the_top_tokens():
    item = pair(["a", "man", "plays"], ["a", "person", "sleeps", "."])
    order = [5, 1, 0, 2, 3, 4, 6]  # "sleeps" first, then "man"
    variants = eraser_variants(item, order, bins=(0.1, 0.4))  # 1 and 3 of 7 tokens
    (without1, only1), (without2, only2) = variants
    assert without1.hypothesis.tokens == ("a", "person", ".") and without1.premise.tokens == ("a", "man", "plays")
    assert only1.hypothesis.tokens == ("sleeps",) and only1.premise.tokens == ()
    assert without2.premise.tokens == ("plays",) and only2.premise.tokens == ("a", "man")


def test_kendall_tau_on_hand_made_rankings():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))


def test_average_precision_and_f1_on_hand_made_numbers():
    assert average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)
    assert average_precision([1, 0, 1], [0.5, 0.5, 0.2]) == pytest.approx(0.5 * 0.5 + 0.5 * 2 / 3)  # tie: one threshold
    assert average_precision([0, 1], [0.1, 0.9]) == pytest.approx(1.0)
    assert math.isnan(average_precision([0, 0], [0.1, 0.9]))
    assert f1_at_k([1, 0, 1, 0], [0.9, 0.8, 0.1, 0.2], 2) == pytest.approx(0.5)
    assert f1_at_k([1, 0, 1, 0], [0.9, 0.1, 0.8, 0.2], 2) == pytest.approx(1.0)
    assert f1_at_k([1, 0], [0.1, 0.9], 1) == 0.0


def test_average_precision_agrees_with_scikit_learn():
    sklearn = pytest.importorskip("sklearn.metrics")
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        labels = (torch.rand(9, generator=generator) > 0.6).tolist()
        if not any(labels):
            continue
        scores = torch.randint(0, 4, (9,), generator=generator).float().tolist()  # many ties
        assert average_precision(labels, scores) == pytest.approx(sklearn.average_precision_score(labels, scores))


def test_bootstrap_interval_brackets_the_mean():
    low, high = bootstrap_interval([0.0, 1.0] * 50, seed=3)
    assert low < 0.5 < high and high - low < 0.3
    assert bootstrap_interval([0.2] * 10) == pytest.approx((0.2, 0.2))
    assert all(math.isnan(x) for x in bootstrap_interval([]))


def test_summary_of_hand_made_records():
    records = {
        "attention": [{"id": "1", "premise_scores": [0.1, 0.2], "hypothesis_scores": [0.3, 0.4],
                       "comprehensiveness": [0.1] * 5, "sufficiency": [0.3] * 5,
                       "layers": {"cross-attention layer 1": [0.1, 0.2, 0.3, 0.4]}}],
        "gradient": [{"id": "1", "premise_scores": [4.0, 3.0], "hypothesis_scores": [2.0, 1.0],
                      "comprehensiveness": [0.0, 0.1, 0.2, 0.3, 0.4], "sufficiency": [0.5] * 5}],
    }
    summary = summarize(records, highlights={"1": frozenset({"sleeps"})}, tokens_by_id={"1": ["a", "sleeps"]})
    gradient = summary["methods"]["gradient"]
    assert gradient["comprehensiveness"] == pytest.approx(0.2)
    assert gradient["sufficiency"] == pytest.approx(0.5)
    assert gradient["agreement_with_attention"]["average"]["median"] == pytest.approx(-1.0)
    assert gradient["agreement_with_attention"]["cross-attention layer 1"]["pairs"] == 1
    assert gradient["plausibility"]["auprc"] == pytest.approx(0.5)  # "sleeps" ranked second of two
    assert gradient["plausibility"]["f1"] == pytest.approx(0.0)
    assert summary["methods"]["attention"]["plausibility"]["auprc"] == pytest.approx(1.0)


def test_summary_counts_completeness_by_the_floor():
    def record(pair_id: str, gap: float, difference: float, steps: int) -> dict:
        return {"id": pair_id, "premise_scores": [1.0], "hypothesis_scores": [0.5], "comprehensiveness": [0.1] * 5,
                "sufficiency": [0.2] * 5, "completeness_gap": gap, "completeness_difference": difference,
                "completeness_error": gap * abs(difference), "steps": steps}

    records = {"integrated_gradients": [record("1", 0.01, 2.0, 50), record("2", -0.04, -0.5, 200),
                                        record("3", 0.3, 0.001, 800),     # below the floor, error 3e-4: within
                                        record("4", 0.9, 0.002, 800),     # below the floor, error 1.8e-3: not
                                        record("5", 0.06, 1.0, 800)]}     # above the floor and missing
    gap = summarize(records)["methods"]["integrated_gradients"]["completeness_gap"]
    assert gap["share_below_0.05"] == pytest.approx(0.4)
    assert gap["pairs_below_floor"] == 2
    assert gap["pairs_missing_tolerance"] == 2
    assert gap["max_abs_above_floor"] == pytest.approx(0.06)
    assert gap["steps_max"] == 800 and gap["steps_median"] == 800
    old_cache = {"integrated_gradients": [{k: v for k, v in r.items() if k in ("id", "premise_scores", "hypothesis_scores",
              "comprehensiveness", "sufficiency", "completeness_gap")} for r in records["integrated_gradients"]]}
    assert set(summarize(old_cache)["methods"]["integrated_gradients"]["completeness_gap"]) == \
        {"median_abs", "max_abs", "share_below_0.05"}


def test_method_records_beat_random_on_the_linear_model():
    """On a linear bag model the grad × input ranking is exactly the logit contribution, so removing its
    top tokens must hurt at least as much as removing random ones on average."""
    model = linear_model()
    featurizer = featurizer_for()
    items = [pair(["a", "man", "plays", "the", "guitar"], ["a", "person", "sleeps"], str(i)) for i in range(3)]
    items += [pair(["the", "man", "sleeps", "."], ["a", "man", "plays", "music", "."], str(i + 3)) for i in range(3)]
    salience = method_records(model, featurizer, items, "grad_x_input")
    chance = method_records(model, featurizer, items, "random", seed=2)
    assert len(salience) == len(items) and len(salience[0]["comprehensiveness"]) == len(BINS)
    assert sum(aopc(r["comprehensiveness"]) for r in salience) >= sum(aopc(r["comprehensiveness"]) for r in chance)
    assert method_records(model, featurizer, items, "attention") is None


def test_agreement_ranks_signed_salience_by_magnitude_and_keeps_the_signed_tau_apart():
    """Attention has no sign: a token with strong evidence *against* the class matters as much as one for
    it. Here attention and |IG| rank the tokens identically (τ = 1) while the signed IG puts the
    attended 'not' last (τ well below 1)."""
    attention = [{"id": "1", "premise_scores": [0.9, 0.1], "hypothesis_scores": [0.6, 0.3],
                  "comprehensiveness": [0.0] * 5, "sufficiency": [0.0] * 5}]
    ig = [{"id": "1", "premise_scores": [-2.0, 0.1], "hypothesis_scores": [1.5, 0.5],
           "comprehensiveness": [0.0] * 5, "sufficiency": [0.0] * 5}]
    assert agreement(attention, ig, "integrated_gradients")["average"] == [pytest.approx(1.0)]
    signed = agreement(attention, ig, "integrated_gradients", signed=True)["average"][0]
    assert signed == pytest.approx(kendall_tau([0.9, 0.1, 0.6, 0.3], [-2.0, 0.1, 1.5, 0.5])) and signed < 0.5
    # an unsigned method is ranked as it is
    assert agreement(attention, ig, "gradient")["average"][0] == pytest.approx(signed)
    summary = summarize({"attention": attention, "integrated_gradients": ig})["methods"]["integrated_gradients"]
    assert summary["agreement_with_attention"]["average"]["median"] == pytest.approx(1.0)
    assert summary["agreement_with_attention_signed"]["average"]["median"] == pytest.approx(signed)


def test_plausibility_ranks_signed_salience_by_magnitude():
    """The highlighted word carries strong evidence against the class (score −3): by |score| it is the top
    token (AUPRC 1, F1 1); by the signed score it would be last."""
    records = [{"id": "1", "hypothesis_scores": [0.5, -3.0, 0.1]}]
    labels = {"1": frozenset({"not"})}
    tokens = {"1": ["he", "not", "."]}
    assert plausibility(records, labels, tokens, "integrated_gradients") == {"auprc": [1.0], "f1": [1.0]}
    assert plausibility(records, labels, tokens, "gradient") == {"auprc": [pytest.approx(1 / 3)], "f1": [0.0]}


def test_the_random_floor_averages_its_permutations_each_rebuilt_by_hand():
    """Every pair's random comprehensiveness and sufficiency are the mean over RANDOM_PERMUTATIONS seeded
    rankings; each ranking's values are recomputed here through the featurizer (`eraser_variants`), an
    independent path from the indexed deletions the records use."""
    model, featurizer = linear_model(), featurizer_for()
    items = [pair(["a", "man", "plays", "the", "guitar", "."], ["a", "person", "sleeps"], "x"),
             pair(["the", "man", "sleeps"], ["a", "man", "plays", "music", "."], "y")]
    records = method_records(model, featurizer, items, "random", seed=4)
    assert RANDOM_PERMUTATIONS >= 10
    for index, (item, record) in enumerate(zip(items, records)):
        assert record["permutations"] == RANDOM_PERMUTATIONS == len(record["permutation_scores"])
        with torch.no_grad():
            before = model.probabilities(model(featurizer.encode([item])))[0, record["target"]]
        by_hand = []
        for permutation in range(RANDOM_PERMUTATIONS):
            order = ranking(random_scores(len(item.premise) + len(item.hypothesis), 4, index, permutation))
            values = []
            for without, only in eraser_variants(item, order):
                with torch.no_grad():
                    after = model.probabilities(model(featurizer.encode([without, only])))[:, record["target"]]
                values.append([float(before - after[0]), float(before - after[1])])
            by_hand.append(values)
        by_hand = torch.tensor(by_hand).mean(0)  # [bins, 2]
        assert record["comprehensiveness"] == pytest.approx(by_hand[:, 0].tolist(), abs=1e-6)
        assert record["sufficiency"] == pytest.approx(by_hand[:, 1].tolist(), abs=1e-6)
    # the permutations differ from one another, so the mean is not one ranking's values
    assert len({tuple(ranking(s)) for s in records[0]["permutation_scores"]}) > 1


def test_each_method_is_compared_with_the_random_floor_pair_by_pair():
    """The difference from random is the mean of per-pair differences with a paired bootstrap interval:
    here the method beats random on every pair by 0.1 ± 0.01 although the two methods' own values spread
    widely (their separate intervals overlap)."""
    spread = [0.05 * i for i in range(40)]
    method = [{"id": str(i), "comprehensiveness": [v + 0.1 + (0.01 if i % 2 else -0.01)] * 5, "sufficiency": [v] * 5,
               "premise_scores": [1.0], "hypothesis_scores": [0.0]} for i, v in enumerate(spread)]
    chance = [{"id": str(i), "comprehensiveness": [v] * 5, "sufficiency": [v] * 5, "premise_scores": [0.5],
               "hypothesis_scores": [0.5]} for i, v in enumerate(spread)]
    summary = summarize({"grad_x_input": method, "random": chance})["methods"]
    versus = summary["grad_x_input"]["versus_random"]["comprehensiveness"]
    assert versus["difference"] == pytest.approx(0.1) and versus["pairs"] == 40
    low, high = versus["interval"]
    assert 0.09 <= low < 0.1 < high <= 0.11
    assert summary["grad_x_input"]["comprehensiveness_interval"][0] < summary["random"]["comprehensiveness_interval"][1]
    assert "versus_random" not in summary["random"]


def test_deletions_built_by_indexing_equal_re_featurized_pairs():
    """`deleted_batch` against `featurizer.encode` of the pairs with the tokens really deleted, for random
    keep masks: ids, characters, POS, exact match recomputed (lemma matches too), a side left empty as
    one UNK token, padding to the longest kept side (or the cut-offs)."""
    vocab_words = ["a", "man", "men", "plays", "played", "music", "the", "."]
    vocab = Vocabulary(["<PAD>", "<UNK>", *vocab_words])
    chars = CharVocabulary(["<PAD>", "<UNK>", *sorted({c for w in vocab_words for c in w})])

    def tagged(tokens, lemmas):
        return SentenceAnalysis(tuple(tokens), tuple("NN" if i % 2 else "VBD" for i in range(len(tokens))), tuple(lemmas))

    items = [AnalysedPair(Pair(id="1", premise="", hypothesis=""),
                          tagged(["The", "men", "played", "music", "."], ["the", "man", "play", "music", "."]),
                          tagged(["a", "man", "plays", "."], ["a", "man", "play", "."])),
             AnalysedPair(Pair(id="2", premise="", hypothesis=""), tagged(["a", "man"], ["a", "man"]),
                          tagged(["music", "music", "zither"], ["music", "music", "zither"]))]
    generator = torch.Generator().manual_seed(0)
    for settings in (FeatureSettings(), FeatureSettings(max_premise_len=7, max_hypothesis_len=6, pad_to_cutoff=True)):
        featurizer = Featurizer(vocab, chars, settings, NLI_LABELS)
        source = deletion_source(featurizer, items)
        rows = torch.tensor([0, 1] * 12)
        keep_p = torch.rand(len(rows), source.batch.premise_ids.shape[1], generator=generator) > 0.5
        keep_h = torch.rand(len(rows), source.batch.hypothesis_ids.shape[1], generator=generator) > 0.5
        keep_p[:2], keep_h[2:4] = False, False  # empty premises, empty hypotheses
        keep_p[4:6], keep_h[4:6] = True, True  # nothing deleted
        built = deleted_batch(source, rows, keep_p, keep_h)
        by_hand = featurizer.encode([with_tokens_kept(items[r], keep_p[v, :len(items[r].premise)].tolist(),
                                                      keep_h[v, :len(items[r].hypothesis)].tolist())
                                     for v, r in enumerate(rows.tolist())])
        for name in ("ids", "mask", "chars", "pos", "exact_match"):
            for side in ("premise", "hypothesis"):
                torch.testing.assert_close(getattr(built, f"{side}_{name}"), getattr(by_hand, f"{side}_{name}"),
                                           msg=f"{side}_{name} differs")


def test_methods_computed_together_equal_methods_computed_alone():
    """Sharing deletions across methods and chunking pairs by length changes no number."""
    model = tiny_model("esan").eval()
    featurizer = featurizer_for(vocab_size=model.config.vocab_size)
    items = [pair(["a", "man", "plays", "the", "guitar", "."], ["a", "person", "sleeps"], "x"),
             pair(["the", "man", "sleeps"], ["a", "man", "plays", "music", "."], "y"),
             pair(["a", "man"], ["the", "guitar", "music", "plays", "a", "."], "z")]
    together = compute_records(model, featurizer, items, ["grad_x_input", "occlusion", "attention", "random"], seed=3)
    for method in ("grad_x_input", "occlusion", "attention", "random"):
        alone = method_records(model, featurizer, items, method, seed=3)
        for a, b in zip(together[method], alone):
            assert a["id"] == b["id"] and a["target"] == b["target"]
            for key in ("premise_scores", "hypothesis_scores", "comprehensiveness", "sufficiency"):
                assert a[key] == pytest.approx(b[key], abs=1e-6)
    occluded = together["occlusion"][0]
    alone_occlusion = occlusion(model, featurizer, items[0], occluded["target"])
    assert occluded["premise_scores"] == pytest.approx(alone_occlusion[0], abs=1e-6)
    assert occluded["hypothesis_scores"] == pytest.approx(alone_occlusion[1], abs=1e-6)


# ---------------------------------------------------------------------------------------- highlights

def test_highlights_reader_and_matching(tmp_path):
    folder = tmp_path / "data" / "esnli_highlights"
    folder.mkdir(parents=True)
    path = folder / "esnli_sents_highlight_contradict.dev.jsonl"
    rows = [{"sentA": "x", "sentB": "A man sleeps .", "keywordA": [], "keywordB": ["Sleeps"]},
            {"sentA": "x", "sentB": "Two \" dogs \" run .", "keywordA": [], "keywordB": ["dogs", "run"]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    highlights = read_esnli_highlights(path)
    assert highlights == [Highlight("A man sleeps .", frozenset({"sleeps"})),
                          Highlight("Two \" dogs \" run .", frozenset({"dogs", "run"}))]
    pairs = [Pair("1", "p", "A man sleeps.", line=1), Pair("2", "p", 'Two "dogs" run.', line=2),
             Pair("3", "p", "Something else.", line=3)]
    assert highlights_by_pair(pairs, highlights) == {"1": frozenset({"sleeps"}), "2": frozenset({"dogs", "run"})}
    assert highlights_by_pair([Pair("9", "p", "Other text", line=1)], highlights) == {}
    assert token_labels(["Dogs", "run", "dogs", "."], frozenset({"dogs", "run"})) == [True, True, True, False]
    (tmp_path / "data" / "snli" / "esnli_tokenized").mkdir(parents=True)
    assert find_highlights_file(tmp_path / "data" / "snli" / "esnli_tokenized") == path
    assert find_highlights_file(tmp_path) is None


def test_a_malformed_highlights_line_names_file_and_line(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"sentB": "a", "keywordB": []}\n{"sentB": "b", "keywordB": "b"}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"h\.jsonl, line 2"):
        read_esnli_highlights(path)


def test_plausibility_skips_pairs_without_highlighted_tokens():
    records = [{"id": "1", "hypothesis_scores": [0.9, 0.1]}, {"id": "2", "hypothesis_scores": [0.2, 0.8]}]
    values = plausibility(records, {"1": frozenset({"cat"}), "2": frozenset({"dog"})},
                          {"1": ["a", "dog"], "2": ["a", "dog"]})
    assert values == {"auprc": [1.0], "f1": [1.0]}


def test_attribution_and_faithfulness_are_registered_analyses_that_apply_to_every_model():
    """Both read only outputs and gradients (attention is optional), so they need no trace type."""
    from nlivis.workflows.explain import ExplainOptions, explain_subject
    from nlivis.workflows.faithfulness import FaithfulnessOptions, faithfulness_subject
    from nlivis.workflows.protocol import ANALYSES
    from nlivis.workflows.specs import ATTRIBUTION, FAITHFULNESS

    assert ANALYSES["attribution"] is ATTRIBUTION and ATTRIBUTION.runner() is explain_subject
    assert ANALYSES["faithfulness"] is FAITHFULNESS and FAITHFULNESS.runner() is faithfulness_subject
    assert ATTRIBUTION.options is ExplainOptions and FAITHFULNESS.options is FaithfulnessOptions
    assert ATTRIBUTION.applies_to(frozenset()) and FAITHFULNESS.applies_to(frozenset())


def test_an_explanation_is_kept_on_disk_and_read_back_as_it_was(tmp_path, monkeypatch):
    """`workflows.explain.explain_kept`: the second ask of the same checkpoint, pair and options reads the kept file
    (the same scores, attention layers included); another pair is explained again; a damaged file is recomputed."""
    from types import SimpleNamespace

    from nlivis.analysis.attribution import TokenScores
    from nlivis.workflows import explain as explaining
    from nlivis.workflows.specs import ExplainOptions

    folder = tmp_path / "checkpoint"
    folder.mkdir()
    for name in ("model.safetensors", "config.json"):
        (folder / name).write_text(name)
    loaded = SimpleNamespace(path=folder, labels=NLI_LABELS)
    made = TokenScores("attention", ["a", "dog"], ["it"], [0.25, 0.75], [1.0], 1, 2,
                       layers={"layer 1": ([0.5, 0.5], [1.0])})
    calls = []
    monkeypatch.setattr(explaining, "explain", lambda loaded, premise, hypothesis, options: calls.append(premise) or
                        explaining.Explanation(tuple(loaded.labels), options, {"attention": made}))
    options = ExplainOptions(methods=("attention",))
    first = explaining.explain_kept(loaded, "A dog .", "It .", options, cache_dir=tmp_path / "cache")
    again = explaining.explain_kept(loaded, "A dog .", "It .", options, cache_dir=tmp_path / "cache")
    assert again.scores == first.scores == {"attention": made} and calls == ["A dog ."]
    explaining.explain_kept(loaded, "A cat .", "It .", options, cache_dir=tmp_path / "cache")
    [kept] = [p for p in (tmp_path / "cache" / "explanations").glob("*.json")
              if p == explaining.kept_path(loaded, "A dog .", "It .", options, tmp_path / "cache")]
    kept.write_bytes(kept.read_bytes().replace(b"0.25", b"0.35"))  # same size, other scores: not trusted
    explaining.explain_kept(loaded, "A dog .", "It .", options, cache_dir=tmp_path / "cache")
    assert calls == ["A dog .", "A cat .", "A dog ."]
