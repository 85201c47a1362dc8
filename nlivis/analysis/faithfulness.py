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
salience method's scores over all the pair's tokens, reported as a distribution over the sample. Attention
has no sign, so salience is ranked by |score| (`magnitudes`); the τ with the signed
scores is kept beside it under its own name (`agreement_with_attention_signed`).

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

import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from nlivis.analysis.attribution import (DEFAULT_INPUT, DIFFERENCE_FLOOR, GAP_TOLERANCE, MAX_STEPS,
                                         METHODS, SIGNED_METHODS, DeletionSource, RawScores, attention_scores,
                                         cut_to_featurizer, deleted_batch, deletion_source, gradients,
                                         integrated_gradients, with_tokens_kept)

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
"""ERASER's rationale sizes, as fractions of a pair's tokens."""
FAITHFULNESS_METHODS = METHODS + ("random",)
BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95
CHUNK_PAIRS = {"integrated_gradients": 4, "gradient": 32, "attention": 32}
"""Pairs per attribution call, chunked by length (integrated gradients multiplies rows by its steps)."""
VARIANT_BATCH = 256
"""Deletion variants per forward pass, unless the model caps its inference batch (`max_inference_batch`)."""
IG_START_STEPS = 16
"""Over a split, adaptive integrated gradients start at this many Gauss–Legendre steps (a single pair's
`explain` starts at `attribution.DEFAULT_STEPS` = 50) and refine every pair to the same completeness
tolerance. Against a start at 50 on 60 SNLI dev pairs of the shipped AttentiveConvNet and DIIN: each
pair's scores within 2.6% of its largest |score| (median 0.7%), token rankings τ ≥ 0.965, 2.5× less CPU."""
RANDOM_PERMUTATIONS = 10
"""Seeded random rankings per pair whose comprehensiveness and sufficiency are averaged into the random floor
(one ranking per pair made the floor itself noisy)."""
CACHE_VERSION = 2
"""2: token-feature attribution, the random floor averaged over permutations, records of all methods made
together (version 1 files are recomputed)."""


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
                       confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; (nan, nan) for no values."""
    data = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    from nlivis.analysis.significance import percentile_interval

    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    return percentile_interval(means, confidence)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall τ-b (ties handled); nan when either side is constant or shorter than two."""
    from scipy.stats import kendalltau

    if len(a) != len(b):
        raise ValueError(f"Kendall τ needs equally long score lists; got {len(a)} and {len(b)}")
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(kendalltau(a, b).statistic)


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


class VariantPool:
    """Deletion variants of a sample's pairs, each distinct (pair, kept tokens) evaluated once however many
    methods and bins ask for it, in batches of similar length built by `attribution.deleted_batch`."""

    def __init__(self, source: DeletionSource, lengths: Sequence[tuple[int, int]]):
        self.source = source
        self.lengths = list(lengths)
        self.index: dict[tuple[int, bytes], int] = {}
        self.keeps: list[tuple[int, np.ndarray]] = []
        self.probabilities: list[torch.Tensor | None] = []

    def add(self, row: int, keep: np.ndarray) -> int:
        """The variant of pair `row` keeping the tokens where `keep` (over premise then hypothesis) is True."""
        key = (row, keep.tobytes())
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.keeps)
            self.keeps.append((row, keep))
            self.probabilities.append(None)
        return found

    def evaluate(self, model, batch_size: int, progress: bool = False) -> None:
        """Class probabilities of every variant not evaluated yet, shortest variants batched together."""
        from tqdm import tqdm

        pending = [v for v, probabilities in enumerate(self.probabilities) if probabilities is None]
        pending.sort(key=lambda v: (int(self.keeps[v][1][:self.lengths[self.keeps[v][0]][0]].sum()),
                                    int(self.keeps[v][1].sum())))
        p_width, h_width = self.source.batch.premise_ids.shape[1], self.source.batch.hypothesis_ids.shape[1]
        bar = tqdm(total=len(pending), desc="deletions", unit="pair", file=sys.stderr, disable=not progress)
        with torch.inference_mode():
            for start in range(0, len(pending), batch_size):
                chunk = pending[start:start + batch_size]
                keep_p = np.zeros((len(chunk), p_width), dtype=bool)
                keep_h = np.zeros((len(chunk), h_width), dtype=bool)
                for position, v in enumerate(chunk):
                    row, keep = self.keeps[v]
                    p = self.lengths[row][0]
                    keep_p[position, :p] = keep[:p]
                    keep_h[position, :len(keep) - p] = keep[p:]
                rows = torch.tensor([self.keeps[v][0] for v in chunk])
                batch = deleted_batch(self.source, rows, torch.from_numpy(keep_p), torch.from_numpy(keep_h))
                probabilities = model.probabilities(model(batch).float())
                for position, v in enumerate(chunk):
                    self.probabilities[v] = probabilities[position]
                bar.update(len(chunk))
        bar.close()

    def probability(self, variant: int, target: int) -> float:
        return float(self.probabilities[variant][target])


def _length_order(items: Sequence) -> list[int]:
    """Sample positions by (premise, hypothesis) length, so a chunk of pairs pads little."""
    return sorted(range(len(items)), key=lambda i: (len(items[i].premise), len(items[i].hypothesis)))


def _chunks(order: Sequence[int], size: int) -> list[list[int]]:
    return [list(order[start:start + size]) for start in range(0, len(order), size)]


def compute_records(model, featurizer, items: Sequence, methods: Sequence[str], seed: int = 1,
                    steps: int | None = None, at: str = DEFAULT_INPUT, permutations: int = RANDOM_PERMUTATIONS,
                    progress: bool = False, timings: dict[str, float] | None = None
                    ) -> dict[str, list[dict[str, Any]] | None]:
    """One record per pair and method: target, scores, per-bin comprehensiveness and sufficiency (and for
    integrated gradients the completeness gap, Δ, the error and the steps used; for attention its layers;
    for random the per-bin values averaged over `permutations` seeded rankings, and their scores). A
    method the model cannot give (attention) maps to None. `steps` None: integrated gradients' adaptive
    default; `at`: where gradients and integrated gradients attribute.

    All methods share the work: the sample is encoded once, every deletion (ERASER's and occlusion's) is a
    `VariantPool` entry built by indexing and evaluated once in length-sorted batches, pairs are chunked
    by length for the gradient passes, and gradient and grad × input come from one backward pass.
    `timings`, when given, receives the wall and CPU seconds each stage took (`stage`, `cpu:stage`; for
    bench/faithfulness_speed.py)."""
    import time

    from tqdm import tqdm

    clock = [time.perf_counter(), time.process_time()]

    def lap(stage: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if timings is not None:
            timings[stage] = timings.get(stage, 0.0) + now - clock[0]
            timings[f"cpu:{stage}"] = timings.get(f"cpu:{stage}", 0.0) + cpu - clock[1]
        clock[0], clock[1] = now, cpu

    unknown = sorted(set(methods) - set(FAITHFULNESS_METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(FAITHFULNESS_METHODS)}")
    if permutations < 1:
        raise ValueError(f"the random floor needs at least one permutation; got {permutations}")
    model.eval()
    items = [cut_to_featurizer(item, featurizer) for item in items]
    lengths = [(len(item.premise), len(item.hypothesis)) for item in items]
    pool = VariantPool(deletion_source(featurizer, items), lengths)
    batch_size = getattr(model, "max_inference_batch", 0) or VARIANT_BATCH
    full = [pool.add(row, np.ones(p + h, dtype=bool)) for row, (p, h) in enumerate(lengths)]
    pool.evaluate(model, batch_size)
    lap("predictions")
    targets = [int(pool.probabilities[v].argmax()) for v in full]
    original = [pool.probability(v, t) for v, t in zip(full, targets)]
    order = _length_order(items)
    scores: dict[str, list[list[float]]] = {}
    extras: dict[str, list[dict[str, Any]]] = {method: [{} for _ in items] for method in methods}

    def run_chunks(name: str, size: int, work) -> None:
        bar = tqdm(total=len(items), desc=name, unit="pair", file=sys.stderr, disable=not progress)
        for chunk in _chunks(order, size):
            work(chunk, featurizer.encode([items[i] for i in chunk]), torch.tensor([targets[i] for i in chunk]))
            bar.update(len(chunk))
        bar.close()

    def keep_raw(method: str, chunk: list[int], raw: RawScores) -> None:
        scores.setdefault(method, [[] for _ in items])
        for position, i in enumerate(chunk):
            p, h = lengths[i]
            # an empty sentence is one UNK position in the batch but no token in the analysis
            scores[method][i] = raw.premise[position, :p].tolist() + raw.hypothesis[position, :h].tolist()

    if "integrated_gradients" in methods:
        def integrate(chunk, batch, target):
            raw = integrated_gradients(model, batch, target, steps, at, start_steps=IG_START_STEPS)
            keep_raw("integrated_gradients", chunk, raw)
            for position, i in enumerate(chunk):
                extras["integrated_gradients"][i] = {
                    "completeness_gap": float(raw.completeness_gap[position]),
                    "completeness_difference": float(raw.completeness_difference[position]),
                    "completeness_error": float(raw.completeness_error[position]),
                    "steps": int(raw.steps[position])}
        run_chunks("integrated_gradients", CHUNK_PAIRS["integrated_gradients"], integrate)
        lap("integrated_gradients")
    if "gradient" in methods or "grad_x_input" in methods:
        def differentiate(chunk, batch, target):
            norm, times_input = gradients(model, batch, target, at)
            keep_raw("gradient", chunk, norm)
            keep_raw("grad_x_input", chunk, times_input)
        run_chunks("gradients", CHUNK_PAIRS["gradient"], differentiate)
        lap("gradients")
    attention_missing = False
    if "attention" in methods:
        def attend(chunk, batch, target):
            nonlocal attention_missing
            with torch.no_grad():
                _, trace = model(batch, trace=True)
            raw = attention_scores(trace, batch.premise_mask, batch.hypothesis_mask)
            if raw is None:
                attention_missing = True
                return
            keep_raw("attention", chunk, raw)
            for position, i in enumerate(chunk):
                p, h = lengths[i]
                extras["attention"][i] = {"layers": {name: lp[position, :p].tolist() + lh[position, :h].tolist()
                                                     for name, (lp, lh) in raw.layers.items()}}
        run_chunks("attention", CHUNK_PAIRS["attention"], attend)
        lap("attention")
    if "occlusion" in methods:
        left_out = []
        for row, (p, h) in enumerate(lengths):
            keeps = ~np.eye(p + h, dtype=bool)
            left_out.append([pool.add(row, keep) for keep in keeps])
        pool.evaluate(model, batch_size, progress)
        scores["occlusion"] = [[original[row] - pool.probability(v, targets[row]) for v in variants]
                               for row, variants in enumerate(left_out)]
        lap("occlusion")
    if "random" in methods:
        scores["random"] = [random_scores(p + h, seed, row) for row, (p, h) in enumerate(lengths)]
        for row, (p, h) in enumerate(lengths):
            extras["random"][row] = {"permutation_scores": [random_scores(p + h, seed, row, r)
                                                            for r in range(permutations)]}

    ranked = [m for m in methods if m in scores and not (m == "attention" and attention_missing)]
    variants: dict[str, list[list[list[tuple[int, int]]]]] = {}  # method → row → ranking → per bin (without, only)
    for method in ranked:
        variants[method] = []
        for row, (p, h) in enumerate(lengths):
            rankings = ([ranking(s) for s in extras[method][row]["permutation_scores"]] if method == "random"
                        else [ranking(scores[method][row])])
            variants[method].append([[(pool.add(row, without), pool.add(row, only))
                                      for without, only in rationale_keeps(p + h, order_)] for order_ in rankings])
    lap("rankings")
    pool.evaluate(model, batch_size, progress)
    lap("deletions")
    if timings is not None:
        timings["variants"] = len(pool.keeps)

    records: dict[str, list[dict[str, Any]] | None] = {}
    for method in methods:
        if method not in ranked:
            records[method] = None
            continue
        rows = []
        for row, item in enumerate(items):
            p = lengths[row][0]
            target, before = targets[row], original[row]
            per_ranking = variants[method][row]
            comprehensiveness = np.mean([[before - pool.probability(w, target) for w, _ in bins] for bins in per_ranking], 0)
            sufficiency = np.mean([[before - pool.probability(o, target) for _, o in bins] for bins in per_ranking], 0)
            record: dict[str, Any] = {"id": item.pair.id, "target": target, "probability": before,
                                      "premise_scores": scores[method][row][:p],
                                      "hypothesis_scores": scores[method][row][p:],
                                      "comprehensiveness": comprehensiveness.tolist(),
                                      "sufficiency": sufficiency.tolist(), **extras[method][row]}
            if method == "random":
                record["permutations"] = permutations
            rows.append(record)
        records[method] = rows
    return records


def method_records(model, featurizer, items: Sequence, method: str, seed: int = 1, steps: int | None = None,
                   progress: bool = False, at: str = DEFAULT_INPUT,
                   permutations: int = RANDOM_PERMUTATIONS) -> list[dict[str, Any]] | None:
    """`compute_records` for one method."""
    return compute_records(model, featurizer, items, [method], seed, steps, at, permutations, progress)[method]


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


def agreement(attention: Sequence[dict[str, Any]], salience: Sequence[dict[str, Any]], method: str = "",
              signed: bool = False) -> dict[str, list[float]]:
    """Per attention layer (and "average"), Kendall τ per pair between attention and a salience method's
    scores: by magnitude (`magnitudes`, the default, as Jain & Wallace rank) or, with `signed`, by the
    signed scores (strongest evidence for the class first, against it last)."""
    by_id = {r["id"]: r for r in salience}
    out: dict[str, list[float]] = {}
    for record in attention:
        other = by_id.get(record["id"])
        if other is None:
            continue
        salience_scores = other["premise_scores"] + other["hypothesis_scores"]
        if not signed:
            salience_scores = magnitudes(salience_scores, method)
        layers = {"average": record["premise_scores"] + record["hypothesis_scores"], **record.get("layers", {})}
        for name, scores in layers.items():
            out.setdefault(name, []).append(kendall_tau(scores, salience_scores))
    return out


def plausibility(records: Sequence[dict[str, Any]], highlights: dict[str, frozenset[str]],
                 tokens_by_id: dict[str, Sequence[str]], method: str = "") -> dict[str, list[float]]:
    """Per pair with at least one highlighted hypothesis token: AUPRC and F1 at the highlight count of the
    method's `magnitudes` (highlights have no direction). A record with `permutation_scores` (the random
    floor) gets the mean over its rankings."""
    from nlivis.data.highlights import token_labels

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


def _distribution(values: Sequence[float]) -> dict[str, Any]:
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return {"pairs": 0}
    q1, median, q3 = np.percentile(kept, [25, 50, 75])
    return {"mean": float(np.mean(kept)), "median": float(median), "quartiles": [float(q1), float(q3)],
            "pairs": len(kept), "undefined": len(values) - len(kept)}


def summarize(records: dict[str, list[dict[str, Any]]], highlights: dict[str, frozenset[str]] | None = None,
              tokens_by_id: dict[str, Sequence[str]] | None = None, seed: int = 0,
              keep_distributions: bool = False) -> dict[str, Any]:
    """`methods` → name → AOPC comprehensiveness / sufficiency with intervals and per bin, each method's
    paired difference from the random floor (`versus_random`), agreement with attention by |score|
    (`agreement_with_attention`; signed methods also `agreement_with_attention_signed`) and plausibility by
    |score| (when highlights are given). `keep_distributions` adds the per-pair τ (by |score|), AUPRC and F1
    values (for plots)."""
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
        if "attention" in records and name not in ("attention", "random"):
            taus = agreement(records["attention"], method_rows, name)
            entry["agreement_with_attention"] = {layer: _distribution(values) for layer, values in taus.items()}
            if name in SIGNED_METHODS:
                signed = agreement(records["attention"], method_rows, name, signed=True)
                entry["agreement_with_attention_signed"] = {layer: _distribution(values)
                                                            for layer, values in signed.items()}
            if keep_distributions:
                entry["agreement_taus"] = taus
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


def checkpoint_key(folder: str | Path) -> str:
    """Name plus a hash of the checkpoint's COMPLETE manifest (which lists every file's sha256)."""
    folder = Path(folder)
    manifest = folder / "COMPLETE"
    digest = hashlib.sha256(manifest.read_bytes() if manifest.is_file() else str(folder.resolve()).encode()).hexdigest()
    return f"{folder.name}-{digest[:12]}"


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


def cache_file(cache_dir: str | Path | None, checkpoint: str | Path, split: str, sample: int | None, seed: int,
               method: str, steps: int | None, pair_ids: Sequence[str] = (), at: str = DEFAULT_INPUT,
               permutations: int = RANDOM_PERMUTATIONS) -> Path:
    """Where one method's per-pair records are cached: by checkpoint, split, sample, seed and method (and a
    hash of the sampled pair ids, so two ways of drawing a sample never share a file), and the method's
    settings (`method_settings_key`)."""
    from nlivis.store.files import cache_root

    size = "all" if sample is None else str(sample)
    extra = method_settings_key(method, steps, at, permutations)
    ids = hashlib.sha256("\n".join(pair_ids).encode()).hexdigest()[:10]
    return (cache_root(cache_dir) / "attribution" / checkpoint_key(checkpoint)
            / f"{split}-sample{size}-seed{seed}-{ids}-{method}{extra}.json")


@dataclass
class FaithfulnessRun:
    """Records per method (None for a method the model cannot give), the sample and where they came from."""

    records: dict[str, list[dict[str, Any]]]
    items: list
    unavailable: list[str]
    cached: list[str]


def run_faithfulness(loaded, items: Sequence, split: str, sample: int | None = 500, seed: int = 1,
                     methods: Sequence[str] = FAITHFULNESS_METHODS, cache_dir: str | Path | None = None,
                     steps: int | None = None, progress: bool = True, at: str = DEFAULT_INPUT,
                     permutations: int = RANDOM_PERMUTATIONS) -> FaithfulnessRun:
    """Records for every method over a seeded sample of `items`, read from the cache when present; the
    methods not cached are computed together (`compute_records`) and each is cached. `steps` None:
    integrated gradients' adaptive default; an integer fixes its step count."""
    from nlivis.store.files import atomic_write_json

    unknown = sorted(set(methods) - set(FAITHFULNESS_METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(FAITHFULNESS_METHODS)}")
    chosen = sample_items(items, sample, seed)
    ids = [item.pair.id for item in chosen]
    records: dict[str, list[dict[str, Any]] | None] = {}
    cached, missing = [], []
    paths = {method: cache_file(cache_dir, loaded.path, split, sample, seed, method, steps, ids, at, permutations)
             for method in methods}
    for method in methods:
        stored = json.loads(paths[method].read_text(encoding="utf-8")) if paths[method].is_file() else None
        if stored and stored.get("version") == CACHE_VERSION and stored.get("pair_ids") == ids:
            cached.append(method)
            records[method] = stored["records"]
        else:
            missing.append(method)
    if missing:
        computed = compute_records(loaded.model, loaded.featurizer, chosen, missing, seed=seed, steps=steps, at=at,
                                   permutations=permutations, progress=progress)
        for method in missing:
            paths[method].parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(paths[method], {"version": CACHE_VERSION, "checkpoint": str(loaded.path), "split": split,
                                              "sample": sample, "seed": seed, "method": method, "at": at,
                                              "pair_ids": ids, "records": computed[method]})
            records[method] = computed[method]
    unavailable = [method for method in methods if records[method] is None]
    return FaithfulnessRun({m: r for m, r in records.items() if r is not None}, chosen, unavailable, cached)


def hypothesis_tokens_by_id(items: Sequence, featurizer) -> dict[str, list[str]]:
    """The hypothesis tokens each pair is read with (after the cut-off)."""
    return {item.pair.id: list(cut_to_featurizer(item, featurizer).hypothesis.tokens) for item in items}


def faithfulness_table(summaries: dict[str, dict[str, Any]]) -> "pd.DataFrame":
    """One row per (model, method) from `summarize` outputs keyed by model label: AOPC comprehensiveness and
    sufficiency with their intervals, comprehensiveness minus the random floor with its paired interval,
    plausibility and the median τ with the averaged attention (by |score|, and signed)."""
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
                "median_tau_attention": entry.get("agreement_with_attention", {}).get("average", {}).get("median", math.nan),
                "median_tau_attention_signed": entry.get("agreement_with_attention_signed", {}).get("average", {})
                .get("median", math.nan),
            })
    return pd.DataFrame(rows)
