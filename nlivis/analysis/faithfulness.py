"""Over a split: are the attributions faithful (ERASER), does attention agree with salience (Kendall τ),
and are they plausible (e-SNLI's human highlights)?

Faithfulness follows ERASER (DeYoung et al., 2020, §4). For each pair and method the tokens of both
sentences (as the model reads them, after the cut-offs) are ranked by the method's score — signed
scores (integrated gradients, grad × input, occlusion) rank the strongest evidence *for* the predicted
class first; ties go to the earlier token (premise before hypothesis). For every bin k ∈ `BINS` the
rationale r is the top ⌊k·n + ½⌋ tokens (at least one), and

    comprehensiveness_k = p(ŷ | x) − p(ŷ | x \\ r)      sufficiency_k = p(ŷ | x) − p(ŷ | r)

with ŷ the predicted class and p the model's output distribution (sparsemax for AMN). AOPC is the mean
over the bins. Removed tokens are **deleted** (the sentence is shortened and re-featurized, see
`attribution.delete_tokens`), identically for every method; a side left empty becomes the featurizer's
single UNK token. `random` ranks the tokens in a seeded random order: the floor to beat. Intervals are
95 % percentile bootstrap intervals of the mean over pairs (`BOOTSTRAP_RESAMPLES` resamples).

Agreement: Kendall τ-b, per pair, between the attention scores (each layer, and their average) and each
salience method's scores over all the pair's tokens; reported as a distribution over the sample.

Integrated gradients run with `attribution.integrated_gradients`' adaptive default (50 steps, refined up
to 800 for pairs that miss the completeness target) unless a fixed step count is given; each record keeps
the gap, Δ, the error and the steps used, and the cache file name carries the settings (`ig_settings_key`).

Plausibility: on the hypothesis tokens of pairs with e-SNLI highlights (`data.highlights`), the
average precision of a method's scores against the highlighted positions (token-level AUPRC, the mean
over pairs with at least one highlighted token) and the F1 of its top-k tokens with k = the number of
highlighted positions (so precision = recall = F1).
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

from nlivis.analysis.attribution import (DEFAULT_STEPS, DIFFERENCE_FLOOR, GAP_TOLERANCE, MAX_STEPS, METHODS,
                                         attention_scores, cut_to_featurizer, gradients, integrated_gradients,
                                         occlusion, predicted_classes, with_tokens_kept)

BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
"""ERASER's rationale sizes, as fractions of a pair's tokens."""
FAITHFULNESS_METHODS = METHODS + ("random",)
BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95
CHUNK_PAIRS = {"integrated_gradients": 4, "occlusion": 1}
"""Pairs per attribution call (integrated gradients multiplies rows by its steps); others use 32."""
CACHE_VERSION = 1


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

def class_probabilities(model, featurizer, items: Sequence, targets: Sequence[int], chunk: int = 256) -> list[float]:
    """p(targets[i] | items[i]) for every (re-featurized) pair, in chunks."""
    out: list[float] = []
    with torch.no_grad():
        for start in range(0, len(items), chunk):
            batch = featurizer.encode(items[start:start + chunk])
            probabilities = model.probabilities(model(batch).float())
            rows = torch.arange(len(batch))
            out += probabilities[rows, torch.tensor(targets[start:start + chunk])].tolist()
    return out


def eraser_variants(item, order: Sequence[int], bins: Sequence[float] = BINS) -> list[tuple[Any, Any]]:
    """Per bin, (pair without the rationale, pair with only the rationale) for a ranking over the pair's
    tokens (premise positions first, then hypothesis)."""
    p, h = len(item.premise), len(item.hypothesis)
    n = p + h
    out = []
    for fraction in bins:
        rationale = set(order[:rationale_size(n, fraction)])
        in_rationale = [i in rationale for i in range(n)]
        without = with_tokens_kept(item, [not x for x in in_rationale[:p]], [not x for x in in_rationale[p:]])
        only = with_tokens_kept(item, in_rationale[:p], in_rationale[p:])
        out.append((without, only))
    return out


def random_scores(n_tokens: int, seed: int, index: int) -> list[float]:
    """Seeded uniform scores: a random ranking, reproducible per (seed, pair position in the sample)."""
    return np.random.default_rng([seed, index]).random(n_tokens).tolist()


def method_records(model, featurizer, items: Sequence, method: str, seed: int = 1, steps: int | None = None,
                   progress: bool = False) -> list[dict[str, Any]] | None:
    """One record per pair for `method`: target, scores, per-bin comprehensiveness and sufficiency (and for
    integrated gradients the completeness gap, Δ and the steps used; for attention its layers). `steps`
    None: integrated gradients' adaptive default. None when the model has nothing for the method (attention)."""
    from tqdm import tqdm

    model.eval()
    items = [cut_to_featurizer(item, featurizer) for item in items]
    chunk = CHUNK_PAIRS.get(method, 32)
    records: list[dict[str, Any]] = []
    bar = tqdm(total=len(items), desc=method, unit="pair", file=sys.stderr, disable=not progress)
    for start in range(0, len(items), chunk):
        part = items[start:start + chunk]
        batch = featurizer.encode(part)
        probabilities, predicted = predicted_classes(model, batch)
        part_records = []
        raw = None
        if method == "integrated_gradients":
            raw = integrated_gradients(model, batch, predicted, steps)
        elif method in ("gradient", "grad_x_input"):
            norm, times_input = gradients(model, batch, predicted)
            raw = norm if method == "gradient" else times_input
        elif method == "attention":
            with torch.no_grad():
                _, trace = model(batch, trace=True)
            raw = attention_scores(trace, batch.premise_mask, batch.hypothesis_mask)
            if raw is None:
                bar.close()
                return None
        for row, item in enumerate(part):
            p, h = len(item.premise), len(item.hypothesis)
            target = int(predicted[row])
            record: dict[str, Any] = {"id": item.pair.id, "target": target,
                                      "probability": float(probabilities[row, target])}
            if method == "occlusion":
                record["premise_scores"], record["hypothesis_scores"] = occlusion(model, featurizer, item, target)
            elif method == "random":
                scores = random_scores(p + h, seed, start + row)
                record["premise_scores"], record["hypothesis_scores"] = scores[:p], scores[p:]
            else:
                # an empty sentence is one UNK position in the batch but no token in the analysis
                record["premise_scores"] = raw.premise[row, :p].tolist()
                record["hypothesis_scores"] = raw.hypothesis[row, :h].tolist()
                if raw.completeness_gap is not None:
                    record["completeness_gap"] = float(raw.completeness_gap[row])
                    record["completeness_difference"] = float(raw.completeness_difference[row])
                    record["completeness_error"] = float(raw.completeness_error[row])
                    record["steps"] = int(raw.steps[row])
                if raw.layers:
                    record["layers"] = {name: lp[row, :p].tolist() + lh[row, :h].tolist()
                                        for name, (lp, lh) in raw.layers.items()}
            part_records.append(record)
        variants, targets = [], []
        for item, record in zip(part, part_records):
            order = ranking(record["premise_scores"] + record["hypothesis_scores"])
            for without, only in eraser_variants(item, order):
                variants += [without, only]
                targets += [record["target"]] * 2
        probabilities_after = class_probabilities(model, featurizer, variants, targets)
        per_pair = 2 * len(BINS)
        for index, record in enumerate(part_records):
            values = probabilities_after[index * per_pair:(index + 1) * per_pair]
            record["comprehensiveness"] = [record["probability"] - v for v in values[0::2]]
            record["sufficiency"] = [record["probability"] - v for v in values[1::2]]
        records += part_records
        bar.update(len(part))
    bar.close()
    return records


# --------------------------------------------------------------------------------------------- summary

def _interval_summary(values: Sequence[float], seed: int) -> tuple[float, list[float]]:
    kept = [v for v in values if not math.isnan(v)]
    mean = float(np.mean(kept)) if kept else math.nan
    return mean, list(bootstrap_interval(kept, seed=seed))


def agreement(attention: Sequence[dict[str, Any]], salience: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Per attention layer (and "average"), Kendall τ per pair between attention and a salience method."""
    by_id = {r["id"]: r for r in salience}
    out: dict[str, list[float]] = {}
    for record in attention:
        other = by_id.get(record["id"])
        if other is None:
            continue
        salience_scores = other["premise_scores"] + other["hypothesis_scores"]
        layers = {"average": record["premise_scores"] + record["hypothesis_scores"], **record.get("layers", {})}
        for name, scores in layers.items():
            out.setdefault(name, []).append(kendall_tau(scores, salience_scores))
    return out


def plausibility(records: Sequence[dict[str, Any]], highlights: dict[str, frozenset[str]],
                 tokens_by_id: dict[str, Sequence[str]]) -> dict[str, list[float]]:
    """Per pair with at least one highlighted hypothesis token: AUPRC and F1 at the highlight count."""
    from nlivis.data.highlights import token_labels

    auprc, f1 = [], []
    for record in records:
        words = highlights.get(record["id"])
        if words is None:
            continue
        labels = token_labels(tokens_by_id[record["id"]], words)
        if not any(labels):
            continue
        scores = record["hypothesis_scores"]
        auprc.append(average_precision(labels, scores))
        f1.append(f1_at_k(labels, scores, sum(labels)))
    return {"auprc": auprc, "f1": f1}


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
    """`methods` → name → AOPC comprehensiveness / sufficiency with intervals and per bin, agreement with
    attention (salience methods) and plausibility (when highlights are given). `keep_distributions` adds
    the per-pair τ, AUPRC and F1 values (for plots)."""
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
        if "attention" in records and name not in ("attention", "random"):
            taus = agreement(records["attention"], method_rows)
            entry["agreement_with_attention"] = {layer: _distribution(values) for layer, values in taus.items()}
            if keep_distributions:
                entry["agreement_taus"] = taus
        if highlights is not None and tokens_by_id is not None:
            values = plausibility(method_rows, highlights, tokens_by_id)
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
    or the adaptive default's start, cap, tolerance and floor."""
    if steps is not None:
        return f"steps{steps}"
    return f"steps{DEFAULT_STEPS}to{MAX_STEPS}-tol{GAP_TOLERANCE:g}-floor{DIFFERENCE_FLOOR:g}"


def cache_file(cache_dir: str | Path | None, checkpoint: str | Path, split: str, sample: int | None, seed: int,
               method: str, steps: int | None, pair_ids: Sequence[str] = ()) -> Path:
    """Where one method's per-pair records are cached: by checkpoint, split, sample, seed and method (and a
    hash of the sampled pair ids, so two ways of drawing a sample never share a file); integrated gradients
    also by its settings (`ig_settings_key`)."""
    from nlivis.store.files import cache_root

    size = "all" if sample is None else str(sample)
    extra = f"-{ig_settings_key(steps)}" if method == "integrated_gradients" else ""
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
                     steps: int | None = None, progress: bool = True) -> FaithfulnessRun:
    """Records for every method over a seeded sample of `items`, read from the cache when present. `steps`
    None: integrated gradients' adaptive default; an integer fixes its step count."""
    from nlivis.store.files import atomic_write_json

    unknown = sorted(set(methods) - set(FAITHFULNESS_METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(FAITHFULNESS_METHODS)}")
    chosen = sample_items(items, sample, seed)
    ids = [item.pair.id for item in chosen]
    records: dict[str, list[dict[str, Any]]] = {}
    unavailable, cached = [], []
    for method in methods:
        path = cache_file(cache_dir, loaded.path, split, sample, seed, method, steps, ids)
        stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        if stored and stored.get("version") == CACHE_VERSION and stored.get("pair_ids") == ids:
            cached.append(method)
            if stored["records"] is None:
                unavailable.append(method)
            else:
                records[method] = stored["records"]
            continue
        result = method_records(loaded.model, loaded.featurizer, chosen, method, seed=seed, steps=steps,
                                progress=progress)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, {"version": CACHE_VERSION, "checkpoint": str(loaded.path), "split": split,
                                 "sample": sample, "seed": seed, "method": method, "pair_ids": ids,
                                 "records": result})
        if result is None:
            unavailable.append(method)
        else:
            records[method] = result
    return FaithfulnessRun(records, chosen, unavailable, cached)


def hypothesis_tokens_by_id(items: Sequence, featurizer) -> dict[str, list[str]]:
    """The hypothesis tokens each pair is read with (after the cut-off)."""
    return {item.pair.id: list(cut_to_featurizer(item, featurizer).hypothesis.tokens) for item in items}


def faithfulness_table(summaries: dict[str, dict[str, Any]]) -> "pd.DataFrame":
    """One row per (model, method) from `summarize` outputs keyed by model label: AOPC comprehensiveness and
    sufficiency with their intervals, plausibility and the median τ with the averaged attention."""
    import pandas as pd

    rows = []
    for model, summary in summaries.items():
        for method, entry in summary["methods"].items():
            plausible = entry.get("plausibility", {})
            rows.append({
                "model": model, "method": method, "pairs": entry["pairs"],
                "comprehensiveness": entry["comprehensiveness"],
                "comprehensiveness_low": entry["comprehensiveness_interval"][0],
                "comprehensiveness_high": entry["comprehensiveness_interval"][1],
                "sufficiency": entry["sufficiency"],
                "sufficiency_low": entry["sufficiency_interval"][0],
                "sufficiency_high": entry["sufficiency_interval"][1],
                "auprc": plausible.get("auprc", math.nan), "f1": plausible.get("f1", math.nan),
                "plausibility_pairs": plausible.get("pairs", 0),
                "median_tau_attention": entry.get("agreement_with_attention", {}).get("average", {}).get("median", math.nan),
            })
    return pd.DataFrame(rows)
