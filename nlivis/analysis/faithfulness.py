"""Over a split: are the attributions faithful (ERASER), does attention agree with salience (Kendall τ),
and are they plausible (e-SNLI's human highlights)?

Faithfulness follows ERASER (DeYoung et al., 2020, §4). For each pair and method the tokens of both
sentences (as the model reads them, after the cut-offs) are ranked by the method's score — signed
scores (integrated gradients, grad × input, occlusion) rank the strongest evidence *for* the predicted
class first, which is what removing a rationale for that class asks; ties go to the earlier token
(premise before hypothesis). For every bin k ∈ `BINS` the rationale r is the top ⌊k·n + ½⌋ tokens (at
least one), and

    comprehensiveness_k = p(ŷ | x) − p(ŷ | x \\ r)      sufficiency_k = p(ŷ | x) − p(ŷ | r)

with ŷ the predicted class and p the model's output distribution (sparsemax for AMN). AOPC is the mean
over the bins. Removed tokens are **deleted** (the sentence is shortened, exact-match flags recomputed, see
`attribution.delete_tokens`; built by indexing with `attribution.deleted_batch`), identically for every
method; a side left empty becomes the featurizer's single UNK token. `random` ranks the tokens in
`RANDOM_PERMUTATIONS` seeded random orders and averages each pair's values over them: the floor to beat.
Intervals are 95 % percentile bootstrap intervals of the mean over pairs (`BOOTSTRAP_RESAMPLES`
resamples); each method's difference from the floor is a paired interval of the per-pair difference
(`difference_from_random`).

Agreement: Kendall τ-b, per pair, between the attention scores (each layer, and their average) and each
salience method's scores, reported as a distribution over the sample (mean and median, each with a
bootstrap interval, and quartiles). Attention has no sign, so salience is ranked by |score| (`magnitudes`); the τ with
the signed scores is kept beside it under its own name (`agreement_with_attention_signed`). Pooled over
both sentences (`agreement_with_attention`) the τ is mostly a sentence-membership artefact: a token's
attention is a sum over the *other* sentence's tokens, so its scale follows that sentence's length and
every hypothesis token can outrank every premise token (ESAN: in 308 of 500 SNLI dev pairs). So the τ is also taken **within the premise**
and **within the hypothesis** (`agreement_within_premise`, `agreement_within_hypothesis`, and both
together, `agreement_within_sentences`, see `within_sentences`), and the pooled τ is reported beside the
**sentence-membership baseline** (`agreement_membership_baseline`): the τ between a plain "is a
hypothesis token" indicator and the method's |scores| over the pooled tokens, which is what the pooled τ
of any attention constant within each sentence would be.

Integrated gradients run adaptively from `IG_START_STEPS` = 16 steps, refined up to 1600 for pairs that miss
the completeness target (`attribution.integrated_gradients`), unless a fixed step count is given; each record keeps
the gap, Δ, the error and the steps used, and the cache file name carries the settings
(`method_settings_key`: also where gradients attribute, `attribution.ATTRIBUTION_INPUTS`).

Plausibility: on the hypothesis tokens of pairs with e-SNLI highlights (`data.highlights`), the
average precision of a method's |scores| against the highlighted positions (token-level AUPRC, the mean
over pairs with at least one highlighted token) and the F1 of its top-k tokens with k = the number of
highlighted positions (so precision = recall = F1). Highlights have no direction, so a signed method is
ranked by magnitude here too.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from nlivis.analysis.attribution import (DIFFERENCE_FLOOR, GAP_TOLERANCE, MAX_STEPS, SIGNED_METHODS,
                                         cut_to_featurizer, with_tokens_kept)
from nlivis.analysis.method_names import FAITHFULNESS_METHODS, RANDOM_PERMUTATIONS
from nlivis.analysis.significance import percentile_interval
from nlivis.data.highlights import token_labels

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
"""ERASER's rationale sizes, as fractions of a pair's tokens."""
BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95
IG_START_STEPS = 16
"""Over a split, adaptive integrated gradients start at this many Gauss–Legendre steps (a single pair's
`explain` starts at `attribution.DEFAULT_STEPS` = 50) and refine every pair to the same completeness
tolerance. Against a start at 50 on 60 SNLI dev pairs of the shipped AttentiveConvNet and DIIN: each
pair's scores within 2.6% of its largest |score| (median 0.7%), token rankings τ ≥ 0.965, 2.5× less CPU."""


# ------------------------------------------------------------------------------------------- metrics

def rationale_size(n_tokens: int, fraction: float) -> int:
    """⌊fraction·n + ½⌋ tokens, at least one and at most n."""
    return min(n_tokens, max(1, math.floor(fraction * n_tokens + 0.5)))


def ranking(scores: Sequence[float]) -> list[int]:
    """Token positions from the highest score to the lowest; ties keep the earlier position first."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def aopc(drops: Sequence[float]) -> float:
    """Area over the perturbation curve: the mean of the per-bin probability drops."""
    return float(np.mean(drops))


def bootstrap_interval(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                       confidence: float = CONFIDENCE, seed: int = 0,
                       statistic: Callable[..., np.ndarray] = np.mean) -> tuple[float, float]:
    """Percentile bootstrap interval of `statistic` (the mean unless given; called with `axis=1` on the
    resamples); (nan, nan) for no values."""
    data = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    estimates = statistic(data[rng.integers(0, data.size, size=(resamples, data.size))], axis=1)
    return percentile_interval(estimates, confidence)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall τ-b (ties handled): Σ sign(Δa)·sign(Δb) over the n(n−1)/2 pairs of positions, over
    √(pairs untied in a · pairs untied in b); nan when either side is constant or shorter than two. Worked out
    directly (the lists are a sentence or a pair long) instead of by `scipy.stats.kendalltau`, whose p-value,
    unused here, took nearly all of a summary's time once every pair has four τ per method and layer."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"Kendall τ needs equally long score lists; got {len(a)} and {len(b)}")
    if x.size < 2:
        return math.nan
    first, second = np.triu_indices(x.size, 1)
    sign_x, sign_y = np.sign(x[first] - x[second]), np.sign(y[first] - y[second])
    untied_x, untied_y = np.count_nonzero(sign_x), np.count_nonzero(sign_y)
    if untied_x == 0 or untied_y == 0:
        return math.nan
    return float(np.dot(sign_x, sign_y) / math.sqrt(untied_x * untied_y))


def average_precision(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the precision–recall curve as average precision (tied scores form one threshold, as
    in scikit-learn); nan when there is no positive label."""
    positives = sum(bool(x) for x in labels)
    if positives == 0:
        return math.nan
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    total, true_seen, seen, previous_recall = 0.0, 0, 0, 0.0
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and scores[order[j]] == scores[order[i]]:
            j += 1
        true_seen += sum(bool(labels[order[t]]) for t in range(i, j))
        seen = j
        recall = true_seen / positives
        total += (recall - previous_recall) * (true_seen / seen)
        previous_recall = recall
        i = j
    return total


def f1_at_k(labels: Sequence[bool], scores: Sequence[float], k: int) -> float:
    """F1 of the top-k positions (ties to the earlier position) against the positive labels."""
    positives = sum(bool(x) for x in labels)
    if positives == 0 or k <= 0:
        return math.nan
    chosen = ranking(scores)[:k]
    hits = sum(bool(labels[i]) for i in chosen)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(chosen), hits / positives
    return 2 * precision * recall / (precision + recall)


# ------------------------------------------------------------------------------- per-pair computation

def eraser_variants(item, order: Sequence[int], bins: Sequence[float] = BINS) -> list[tuple[Any, Any]]:
    """Per bin, (pair without the rationale, pair with only the rationale) for a ranking over the pair's
    tokens (premise positions first, then hypothesis), as analysed pairs: what `rationale_keeps` encodes."""
    p = len(item.premise)
    out = []
    for without, only in rationale_keeps(p + len(item.hypothesis), order, bins):
        out.append((with_tokens_kept(item, without[:p], without[p:]), with_tokens_kept(item, only[:p], only[p:])))
    return out


def rationale_keeps(n_tokens: int, order: Sequence[int], bins: Sequence[float] = BINS
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per bin, the keep masks over a pair's n tokens (premise then hypothesis) of (the pair without the
    rationale, only the rationale), the rationale being the top `rationale_size` positions of `order`."""
    out = []
    for fraction in bins:
        in_rationale = np.zeros(n_tokens, dtype=bool)
        in_rationale[list(order[:rationale_size(n_tokens, fraction)])] = True
        out.append((~in_rationale, in_rationale))
    return out


def random_scores(n_tokens: int, seed: int, index: int, permutation: int = 0) -> list[float]:
    """Seeded uniform scores: a random ranking, reproducible per (seed, pair position in the sample,
    permutation number)."""
    return np.random.default_rng([seed, index, permutation]).random(n_tokens).tolist()


# --------------------------------------------------------------------------------------------- summary

def _interval_summary(values: Sequence[float], seed: int) -> tuple[float, list[float]]:
    kept = [v for v in values if not math.isnan(v)]
    mean = float(np.mean(kept)) if kept else math.nan
    return mean, list(bootstrap_interval(kept, seed=seed))


def magnitudes(scores: Sequence[float], method: str) -> list[float]:
    """|score| for a signed method (`attribution.SIGNED_METHODS`), the scores as they are otherwise: how much
    a token matters, whichever way. Agreement with attention and plausibility rank by it; attention and
    human highlights have no direction, so ranking strong evidence *against* the class last would
    compare directions, not importance."""
    return [abs(v) for v in scores] if method in SIGNED_METHODS else list(scores)


SENTENCE_PARTS = ("pooled", "premise", "hypothesis")
"""Which of a pair's tokens a τ ranks: all of them (premise then hypothesis), or one sentence's."""


def sentence_part(scores: Sequence[float], premise_length: int, part: str) -> list[float]:
    """The scores of one `SENTENCE_PARTS` part of a pair's scores (premise positions first)."""
    if part not in SENTENCE_PARTS:
        raise ValueError(f"unknown sentence part {part!r}; known: {list(SENTENCE_PARTS)}")
    if part == "premise":
        return list(scores[:premise_length])
    if part == "hypothesis":
        return list(scores[premise_length:])
    return list(scores)


def agreement(attention: Sequence[dict[str, Any]], salience: Sequence[dict[str, Any]], method: str = "",
              signed: bool = False, part: str = "pooled") -> dict[str, list[float]]:
    """Per attention layer (and "average"), Kendall τ per pair between attention and a salience method's
    scores: by magnitude (`magnitudes`, the default, as Jain & Wallace rank) or, with `signed`, by the
    signed scores (strongest evidence for the class first, against it last); over the pair's pooled tokens
    or within one sentence (`part`, see `sentence_part`). A τ that is undefined (a sentence of one token,
    or constant scores on either side) is nan, kept so that `_distribution` counts it."""
    by_id = {r["id"]: r for r in salience}
    out: dict[str, list[float]] = {}
    for record in attention:
        other = by_id.get(record["id"])
        if other is None:
            continue
        premise_length = len(record["premise_scores"])
        salience_scores = other["premise_scores"] + other["hypothesis_scores"]
        if not signed:
            salience_scores = magnitudes(salience_scores, method)
        salience_scores = sentence_part(salience_scores, premise_length, part)
        layers = {"average": record["premise_scores"] + record["hypothesis_scores"], **record.get("layers", {})}
        for name, scores in layers.items():
            out.setdefault(name, []).append(kendall_tau(sentence_part(scores, premise_length, part), salience_scores))
    return out


def within_sentences(premise: dict[str, list[float]], hypothesis: dict[str, list[float]]) -> dict[str, list[float]]:
    """Per layer, the within-premise and within-hypothesis τ of every pair in one list, so their mean is the
    **pair-weighted** mean of the two sentences' means: each weighted by the number of pairs where its τ is
    defined. Each sentence of each pair is one observation, as each pair is one in the pooled τ; equal
    weights would let the sentence with fewer defined τ (short hypotheses) count more per observation,
    and weighting by token pairs would let long premises dominate."""
    return {layer: premise.get(layer, []) + hypothesis.get(layer, []) for layer in {**premise, **hypothesis}}


def membership_indicator(premise_length: int, hypothesis_length: int) -> list[float]:
    """0 for every premise token, 1 for every hypothesis token: a ranking that knows only the sentence."""
    return [0.0] * premise_length + [1.0] * hypothesis_length


def membership_baseline(records: Sequence[dict[str, Any]], method: str = "") -> list[float]:
    """Per pair, Kendall τ between `membership_indicator` and the method's `magnitudes` over the pooled
    tokens: the pooled τ that any attention constant within each sentence (hypothesis above premise) would
    reach. nan where undefined (an empty sentence, or constant scores)."""
    taus = []
    for record in records:
        p, h = len(record["premise_scores"]), len(record["hypothesis_scores"])
        scores = magnitudes(record["premise_scores"] + record["hypothesis_scores"], method)
        taus.append(kendall_tau(membership_indicator(p, h), scores))
    return taus


def hypothesis_above_premise(records: Sequence[dict[str, Any]], method: str = "") -> int:
    """Pairs whose every hypothesis token scores (by `magnitudes`) strictly above every premise token."""
    count = 0
    for record in records:
        premise = magnitudes(record["premise_scores"], method)
        hypothesis = magnitudes(record["hypothesis_scores"], method)
        count += bool(premise and hypothesis and min(hypothesis) > max(premise))
    return count


def plausibility(records: Sequence[dict[str, Any]], highlights: dict[str, frozenset[str]],
                 tokens_by_id: dict[str, Sequence[str]], method: str = "") -> dict[str, list[float]]:
    """Per pair with at least one highlighted hypothesis token: AUPRC and F1 at the highlight count of the
    method's `magnitudes` (highlights have no direction). A record with `permutation_scores` (the random
    floor) gets the mean over its rankings."""
    auprc, f1 = [], []
    for record in records:
        words = highlights.get(record["id"])
        if words is None:
            continue
        labels = token_labels(tokens_by_id[record["id"]], words)
        if not any(labels):
            continue
        h = len(record["hypothesis_scores"])
        rankings = ([all_scores[len(all_scores) - h:] for all_scores in record["permutation_scores"]]
                    if "permutation_scores" in record else [record["hypothesis_scores"]])
        rankings = [magnitudes(scores, method) for scores in rankings]
        auprc.append(float(np.mean([average_precision(labels, scores) for scores in rankings])))
        f1.append(float(np.mean([f1_at_k(labels, scores, sum(labels)) for scores in rankings])))
    return {"auprc": auprc, "f1": f1}


def difference_from_random(method_rows: Sequence[dict[str, Any]], random_rows: Sequence[dict[str, Any]],
                           metric: str, seed: int) -> dict[str, Any]:
    """The method's AOPC minus the random floor's, pair by pair on the pairs both have, with a 95% bootstrap
    interval of the mean difference: one paired interval instead of two separate ones, whose overlap says
    little about the difference."""
    floor = {r["id"]: aopc(r[metric]) for r in random_rows}
    differences = [aopc(r[metric]) - floor[r["id"]] for r in method_rows if r["id"] in floor]
    mean, interval = _interval_summary(differences, seed)
    return {"difference": mean, "interval": interval, "pairs": len(differences)}


def _distribution(values: Sequence[float], seed: int = 0) -> dict[str, Any]:
    """Mean and median of the defined values, each with its 95% percentile bootstrap interval
    (`bootstrap_interval`, the resamples and seed of every other interval here), and the quartiles; `pairs`
    counts the defined values and `undefined` the nan ones left out."""
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return {"pairs": 0, "undefined": len(values)}
    q1, median, q3 = np.percentile(kept, [25, 50, 75])
    return {"mean": float(np.mean(kept)), "mean_interval": list(bootstrap_interval(kept, seed=seed)),
            "median": float(median), "median_interval": list(bootstrap_interval(kept, seed=seed, statistic=np.median)),
            "quartiles": [float(q1), float(q3)], "pairs": len(kept), "undefined": len(values) - len(kept)}


AGREEMENT_KEYS = {"agreement_with_attention": "pooled", "agreement_within_premise": "premise",
                  "agreement_within_hypothesis": "hypothesis"}
"""`summarize`'s key for the τ with attention over each `SENTENCE_PARTS` part."""


def agreement_summary(attention: Sequence[dict[str, Any]], method_rows: Sequence[dict[str, Any]], method: str,
                      seed: int = 0, keep_distributions: bool = False) -> dict[str, Any]:
    """A salience method's agreement with attention by |score|, per layer: pooled over the pair's tokens, within
    the premise, within the hypothesis and within both (`within_sentences`); with the signed τ for a signed
    method (`agreement_with_attention_signed`, pooled). `agreement_taus` (with `keep_distributions`) holds
    the per-pair values: part → layer → τ."""
    taus = {part: agreement(attention, method_rows, method, part=part) for part in SENTENCE_PARTS}
    taus["sentences"] = within_sentences(taus["premise"], taus["hypothesis"])
    keys = {**AGREEMENT_KEYS, "agreement_within_sentences": "sentences"}
    entry: dict[str, Any] = {key: {layer: _distribution(values, seed) for layer, values in taus[part].items()}
                             for key, part in keys.items()}
    if method in SIGNED_METHODS:
        signed = agreement(attention, method_rows, method, signed=True)
        entry["agreement_with_attention_signed"] = {layer: _distribution(values, seed)
                                                    for layer, values in signed.items()}
    if keep_distributions:
        entry["agreement_taus"] = taus
    return entry


def baseline_summary(method_rows: Sequence[dict[str, Any]], method: str, seed: int = 0,
                     keep_distributions: bool = False) -> dict[str, Any]:
    """`agreement_membership_baseline`: the distribution of `membership_baseline` with the count of pairs whose
    every hypothesis token outranks every premise token (`hypothesis_above_premise`), and with
    `keep_distributions` its per-pair τ (`membership_taus`)."""
    taus = membership_baseline(method_rows, method)
    entry: dict[str, Any] = {"agreement_membership_baseline": {
        **_distribution(taus, seed), "hypothesis_above_premise": hypothesis_above_premise(method_rows, method)}}
    if keep_distributions:
        entry["membership_taus"] = taus
    return entry


def summarize(records: dict[str, list[dict[str, Any]]], highlights: dict[str, frozenset[str]] | None = None,
              tokens_by_id: dict[str, Sequence[str]] | None = None, seed: int = 0,
              keep_distributions: bool = False) -> dict[str, Any]:
    """`methods` → name → AOPC comprehensiveness / sufficiency with intervals and per bin, each method's
    paired difference from the random floor (`versus_random`), agreement with attention by |score| pooled,
    within each sentence and within both (`agreement_summary`; signed methods also
    `agreement_with_attention_signed`), the sentence-membership baseline of every method but random
    (`baseline_summary`; for attention itself: how much of its ranking the sentence explains) and
    plausibility by |score| (when highlights are given). `keep_distributions` adds the per-pair τ (by
    |score|), AUPRC and F1 values (for plots)."""
    methods: dict[str, Any] = {}
    for name, method_rows in records.items():
        entry: dict[str, Any] = {"pairs": len(method_rows)}
        for metric in ("comprehensiveness", "sufficiency"):
            per_pair = [aopc(r[metric]) for r in method_rows]
            entry[metric], entry[f"{metric}_interval"] = _interval_summary(per_pair, seed)
            entry[f"{metric}_by_bin"] = {f"{round(b * 100)}%": float(np.mean([r[metric][i] for r in method_rows]))
                                         for i, b in enumerate(BINS)}
        # a gap is NaN (undefined) only where f(x) − f(baseline) is exactly 0; it then counts as missing 0.05
        gaps = [abs(r["completeness_gap"]) for r in method_rows if "completeness_gap" in r]
        if gaps:
            entry["completeness_gap"] = {"median_abs": float(np.nanmedian(gaps)), "max_abs": float(np.nanmax(gaps)),
                                         f"share_below_{GAP_TOLERANCE}": float(np.mean([g < GAP_TOLERANCE for g in gaps]))}
            # records cached before refinement existed carry neither Δ, the error nor steps
            if all("completeness_error" in r for r in method_rows):
                differences = [abs(r["completeness_difference"]) for r in method_rows]
                errors = [abs(r["completeness_error"]) for r in method_rows]
                entry["completeness_gap"].update(
                    difference_floor=DIFFERENCE_FLOOR,
                    pairs_below_floor=sum(d < DIFFERENCE_FLOOR for d in differences),
                    max_abs_above_floor=max((g for g, d in zip(gaps, differences) if d >= DIFFERENCE_FLOOR), default=0.0),
                    pairs_missing_tolerance=sum(not e < GAP_TOLERANCE * max(d, DIFFERENCE_FLOOR)
                                                for e, d in zip(errors, differences)),
                    steps_median=float(np.median([r["steps"] for r in method_rows])),
                    steps_max=max(r["steps"] for r in method_rows))
        if "random" in records and name != "random":
            entry["versus_random"] = {metric: difference_from_random(method_rows, records["random"], metric, seed)
                                      for metric in ("comprehensiveness", "sufficiency")}
        if name == "random" and method_rows and "permutations" in method_rows[0]:
            entry["permutations"] = method_rows[0]["permutations"]
        if name != "random":
            entry.update(baseline_summary(method_rows, name, seed, keep_distributions))
        if "attention" in records and name not in ("attention", "random"):
            entry.update(agreement_summary(records["attention"], method_rows, name, seed, keep_distributions))
        if highlights is not None and tokens_by_id is not None:
            values = plausibility(method_rows, highlights, tokens_by_id, name)
            auprc, auprc_interval = _interval_summary(values["auprc"], seed)
            f1, f1_interval = _interval_summary(values["f1"], seed)
            entry["plausibility"] = {"auprc": auprc, "auprc_interval": auprc_interval, "f1": f1,
                                     "f1_interval": f1_interval, "pairs": len(values["auprc"])}
            if keep_distributions:
                entry["plausibility_values"] = values
        methods[name] = entry
    return {"methods": methods}


# ------------------------------------------------------------------------------------------ a whole run

def sample_items(items: Sequence, sample: int | None, seed: int) -> list:
    """`sample` pairs drawn without replacement by `seed`, kept in split order; all when sample is None or
    at least the split's size."""
    if sample is None or sample >= len(items):
        return list(items)
    if sample < 1:
        raise ValueError(f"--sample must be at least 1; got {sample}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(items), size=sample, replace=False))
    return [items[i] for i in chosen]


def ig_settings_key(steps: int | None) -> str:
    """The integrated-gradients settings that change its records, as a cache-name part: a fixed step count,
    or the adaptive run's start (`IG_START_STEPS`), cap, tolerance and floor."""
    if steps is not None:
        return f"steps{steps}"
    return f"steps{IG_START_STEPS}to{MAX_STEPS}-tol{GAP_TOLERANCE:g}-floor{DIFFERENCE_FLOOR:g}"


def method_settings_key(method: str, steps: int | None, at: str, permutations: int) -> str:
    """The settings a method's records depend on, as a cache-name part: where gradients and integrated
    gradients attribute, integrated gradients' steps (`ig_settings_key`), the random floor's permutations."""
    if method == "integrated_gradients":
        return f"-{at}-{ig_settings_key(steps)}"
    if method in ("gradient", "grad_x_input"):
        return f"-{at}"
    if method == "random":
        return f"-perm{permutations}"
    return ""


def hypothesis_tokens_by_id(items: Sequence, featurizer) -> dict[str, list[str]]:
    """The hypothesis tokens each pair is read with (after the cut-off)."""
    return {item.pair.id: list(cut_to_featurizer(item, featurizer).hypothesis.tokens) for item in items}


AGREEMENT_COLUMNS = {"median_tau_attention": "agreement_with_attention",
                     "median_tau_membership_baseline": "agreement_membership_baseline",
                     "median_tau_within_premise": "agreement_within_premise",
                     "median_tau_within_hypothesis": "agreement_within_hypothesis",
                     "median_tau_within_sentences": "agreement_within_sentences",
                     "median_tau_attention_signed": "agreement_with_attention_signed"}
"""`faithfulness_table`'s median-τ columns and the `summarize` keys they come from (the averaged attention's;
the pooled τ with the membership baseline beside it)."""


def agreement_columns(entry: dict[str, Any]) -> dict[str, float]:
    """The median τ of `AGREEMENT_COLUMNS` for one method's `summarize` entry (nan where it has none)."""
    columns = {}
    for column, key in AGREEMENT_COLUMNS.items():
        found = entry.get(key, {})
        found = found if key == "agreement_membership_baseline" else found.get("average", {})
        columns[column] = found.get("median", math.nan)
    return columns


def faithfulness_table(summaries: dict[str, dict[str, Any]]) -> "pd.DataFrame":
    """One row per (model, method) from `summarize` outputs keyed by model label: AOPC comprehensiveness and
    sufficiency with their intervals, comprehensiveness minus the random floor with its paired interval,
    plausibility and the median τ with the averaged attention (`AGREEMENT_COLUMNS`: pooled by |score| beside
    the membership baseline, within each sentence and within both, and pooled signed)."""
    import pandas as pd

    rows = []
    for model, summary in summaries.items():
        for method, entry in summary["methods"].items():
            plausible = entry.get("plausibility", {})
            versus = entry.get("versus_random", {}).get("comprehensiveness", {})
            rows.append({
                "model": model, "method": method, "pairs": entry["pairs"],
                "comprehensiveness": entry["comprehensiveness"],
                "comprehensiveness_low": entry["comprehensiveness_interval"][0],
                "comprehensiveness_high": entry["comprehensiveness_interval"][1],
                "sufficiency": entry["sufficiency"],
                "sufficiency_low": entry["sufficiency_interval"][0],
                "sufficiency_high": entry["sufficiency_interval"][1],
                "comprehensiveness_minus_random": versus.get("difference", math.nan),
                "comprehensiveness_minus_random_low": versus.get("interval", [math.nan] * 2)[0],
                "comprehensiveness_minus_random_high": versus.get("interval", [math.nan] * 2)[1],
                "auprc": plausible.get("auprc", math.nan), "f1": plausible.get("f1", math.nan),
                "plausibility_pairs": plausible.get("pairs", 0),
                **agreement_columns(entry),
            })
    return pd.DataFrame(rows)
