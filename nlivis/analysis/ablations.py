"""Variants of one model side by side: what each checkpoint recorded, paired differences against a
reference (usually the full model), whether a difference is larger than the noise between two seeds of
the full model, per-tag differences, and the papers' ablation rows each variant corresponds to.

Everything reads plain JSON files a checkpoint folder holds (config.json, metrics.json, metrics.jsonl,
predictions_<split>.jsonl); no weights are loaded, so a whole family compares in milliseconds.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from nlivis.analysis.breakdown import Predictions, accuracy_by_tag, compare_models
from nlivis.analysis.paper_tables import FAMILY_PAPERS, PAPER_ROWS, PAPERS, ablation_results, our_split, paper_table
from nlivis.store.predictions import find_prediction_files, predictions_frame
from nlivis.analysis.significance import benjamini_hochberg, discordant_counts, holm_adjusted, mcnemar_exact
from nlivis.store.metrics_log import read_metrics_log

SIGNIFICANCE_LEVEL = 0.05
"""A difference is significant when its Holm-adjusted McNemar p (two-sided) is below this: the tests of one
table (each variant against the reference; each tag × variant) are one family, so 13 tags × 5 variants at
0.05 do not make three "significant" tag differences out of noise alone."""
ADJUSTMENT = "Holm"
"""The correction `significant` uses (`significance.holm_adjusted`); Benjamini–Hochberg q-values are shown
beside it for a reader who wants false-discovery control instead."""

@dataclass(frozen=True)
class VariantRecord:
    """What one checkpoint folder recorded about its training, read from its JSON files."""

    folder: Path
    model: str
    config_name: str
    protocol: str
    seed: int | None
    select_split: str
    select_accuracy: float | None
    report_accuracy: dict[str, float] = field(default_factory=dict)
    parameters: int | None = None
    wall_time_s: float | None = None
    pairs_per_s: float | None = None
    """Median training throughput over the logged windows of metrics.jsonl (None when not logged)."""
    device: str = ""
    labels: tuple[str, ...] = ()
    """The checkpoint's label order (its predictions' probabilities follow it)."""
    prediction_splits: tuple[str, ...] = ()
    """Split keys with a predictions_<split>.jsonl in the folder."""
    training_run: tuple[Any, ...] = ()
    """What the run's training was besides its seed (config.json's optimizer steps and augmentation kinds): runs of
    one model are seeds of each other only when it is the same, so a compute-matched control or an augmented run is
    no second seed of the full model."""

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def is_full_model(self) -> bool:
        """The family's own config (`gcnn`), as opposed to an ablation (`gcnn-no_forget_gate`)."""
        return self.config_name == self.model


def _read_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot be read ({error})") from error
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return value


def _median_throughput(path: Path) -> float | None:
    speeds = [float(r["pairs_per_s"]) for r in read_metrics_log(path)
              if isinstance(r.get("pairs_per_s"), (int, float)) and r["pairs_per_s"] > 0]
    return statistics.median(speeds) if speeds else None


def read_variant(folder: str | Path) -> VariantRecord:
    """The record of a complete checkpoint folder; ValueError naming the file when one is unreadable."""
    folder = Path(folder)
    config = _read_json(folder / "config.json")
    metrics = _read_json(folder / "metrics.json")
    try:
        model = str(config["model"]["name"])
        protocol = str(config["dataset"]["protocol"])
    except (KeyError, TypeError) as error:
        raise ValueError(f"{folder / 'config.json'}: lacks {error}") from error
    report = {key: float(value["accuracy"]) for key, value in (metrics.get("report") or {}).items()
              if isinstance(value, Mapping) and isinstance(value.get("accuracy"), (int, float))}
    accuracy = metrics.get("best_dev_accuracy")
    wall_time = config.get("wall_time_s")
    return VariantRecord(
        folder=folder, model=model, config_name=str(config.get("config_name") or folder.name), protocol=protocol,
        seed=config.get("seed") if isinstance(config.get("seed"), int) else None,
        select_split=str(metrics.get("select_split") or config["dataset"].get("select", "")),
        select_accuracy=float(accuracy) if isinstance(accuracy, (int, float)) else None,
        report_accuracy=report,
        parameters=config.get("parameters") if isinstance(config.get("parameters"), int) else None,
        wall_time_s=float(wall_time) if isinstance(wall_time, (int, float)) else None,
        pairs_per_s=_median_throughput(folder / "metrics.jsonl"), device=str(config.get("device", "")),
        labels=tuple(str(label) for label in config.get("labels") or ()),
        prediction_splits=tuple(find_prediction_files(folder)),
        training_run=(config.get("steps"), tuple((config.get("augmentation") or {}).get("kinds") or ())),
    )


def read_variants(folders: Sequence[str | Path]) -> tuple[list[VariantRecord], list[str]]:
    """The records of complete checkpoint folders, and why each folder whose JSON files cannot be read is left out."""
    records, problems = [], []
    for folder in folders:
        try:
            records.append(read_variant(folder))
        except ValueError as error:
            problems.append(str(error))
    return records, problems


def families(records: Sequence[VariantRecord]) -> dict[str, list[str]]:
    """Model name → the protocols it has checkpoints for (variants are only compared within one protocol),
    the model with the most checkpoints first (the one with ablations to show), then by name; protocols
    with more checkpoints first."""
    counts: dict[tuple[str, str], int] = {}
    for record in records:
        counts[(record.model, record.protocol)] = counts.get((record.model, record.protocol), 0) + 1
    per_model = {model: sum(n for (m, _), n in counts.items() if m == model) for model, _ in counts}
    found: dict[str, list[str]] = {}
    for (model, protocol), _ in sorted(counts.items(), key=lambda item: (-per_model[item[0][0]], item[0][0],
                                                                          -item[1], item[0][1])):
        found.setdefault(model, []).append(protocol)
    return found


def family_members(records: Sequence[VariantRecord], model: str, protocol: str) -> list[VariantRecord]:
    """The checkpoints of one model under one protocol: the full model first (lowest seed first), then
    the variants by config name and seed."""
    members = [r for r in records if r.model == model and r.protocol == protocol]
    return sorted(members, key=lambda r: (not r.is_full_model, r.config_name, r.seed or 0, r.name))


def full_model_seeds(members: Sequence[VariantRecord]) -> list[VariantRecord]:
    """The full model's checkpoints, one per seed (the first found of each), e.g. `gcnn-snli-small` and
    `gcnn-snli-small-seed2`: runs of the full config trained as the first one found was (`training_run`), so that
    `gcnn-snli-small-matched-seed2` (more steps) or an augmented run is not taken for the full model's second seed."""
    full = [record for record in members if record.is_full_model]
    by_seed: dict[int | None, VariantRecord] = {}
    for record in full:
        if record.training_run == full[0].training_run:
            by_seed.setdefault(record.seed, record)
    return list(by_seed.values())


def comparable_splits(members: Sequence[VariantRecord], reference: VariantRecord) -> list[str]:
    """Splits with predictions from the reference and at least one other member, the reference's select
    split first."""
    others = {split for member in members if member.name != reference.name for split in member.prediction_splits}
    shared = [split for split in reference.prediction_splits if split in others]
    return sorted(shared, key=lambda split: (split != reference.select_split, split))


def our_accuracies(members: Sequence[VariantRecord]) -> dict[str, dict[str, float]]:
    """Config name → {split key → accuracy in %} of its first checkpoint (lowest seed): the select split and every
    split it was scored on, to set beside the papers' rows (`paper_ablations`)."""
    accuracies: dict[str, dict[str, float]] = {}
    for member in sorted(members, key=lambda m: (m.seed or 0, m.name)):
        scored = {split: 100 * accuracy for split, accuracy in member.report_accuracy.items()}
        if member.select_split and member.select_accuracy is not None:
            scored[member.select_split] = 100 * member.select_accuracy
        if scored:
            accuracies.setdefault(member.config_name, scored)
    return accuracies


OURS = "ours (%)"
OURS_ON = "ours on"
"""`paper_ablations`' columns for our number beside a paper's row and the split it is on."""


def short_names(members: Sequence[VariantRecord]) -> dict[str, str]:
    """Checkpoint folder name → a label without the family and protocol every member shares, for chart
    axes: `diin-no_self_attention-snli-small` → `no_self_attention`, the full model → `full model`, a
    second seed → `full model · seed 2`. The seed is named only where a config has several; a label two
    members would share falls back to the folder name."""
    seeds_of: dict[str, int] = {}
    for record in members:
        seeds_of[record.config_name] = seeds_of.get(record.config_name, 0) + 1
    labels: dict[str, str] = {}
    for record in members:
        label = record.config_name.removeprefix(f"{record.model}-") if not record.is_full_model else "full model"
        if seeds_of[record.config_name] > 1 and record.seed is not None:
            label += f" · seed {record.seed}"
        labels[record.name] = label
    repeated = {label for label in labels.values() if list(labels.values()).count(label) > 1}
    return {name: (name if label in repeated else label) for name, label in labels.items()}


def variant_table(members: Sequence[VariantRecord], reference: VariantRecord | None = None) -> pd.DataFrame:
    """One row per checkpoint: its short label (`short_names`), config, seed, select-split and report
    accuracies, the select accuracy's difference to `reference`, parameters, training time, training
    pairs/s and the paper rows it matches.
    `attrs["accuracy_columns"]` lists the columns holding accuracies (0–1); `attrs["select_column"]` the
    first checkpoint's select-split column."""
    rows = []
    accuracy_columns: list[str] = []
    labels = short_names(members)
    for record in members:
        select_column = f"{record.select_split} (select)"
        row: dict[str, object] = {"checkpoint": record.name, "variant": labels[record.name], "config": record.config_name,
                                  "seed": record.seed, select_column: record.select_accuracy}
        for key, accuracy in record.report_accuracy.items():
            if key != record.select_split:
                row[key] = accuracy
        if reference is not None and record.select_accuracy is not None and reference.select_accuracy is not None:
            row["Δ select vs reference"] = record.select_accuracy - reference.select_accuracy
        accuracy_columns += [c for c in row if c not in accuracy_columns and c not in {"checkpoint", "variant", "config", "seed"}]
        row.update({"parameters": record.parameters,
                    "training time (min)": None if record.wall_time_s is None else record.wall_time_s / 60,
                    "training pairs/s": record.pairs_per_s, "device": record.device,
                    "paper row": "; ".join(PAPER_ROWS.get(record.config_name, ())) or "—"})
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["accuracy_columns"] = accuracy_columns
    table.attrs["select_column"] = f"{members[0].select_split} (select)" if members else ""
    return table


@dataclass(frozen=True)
class SeedNoise:
    """Seeds of the full model on one split: how far apart their accuracies are."""

    seeds: tuple[str, ...]
    """The checkpoints compared (one per seed)."""
    accuracies: tuple[float, ...]
    """Each seed's accuracy on the pairs every seed predicted."""
    pairs: int

    @property
    def gap(self) -> float:
        """The range of the seeds' accuracies (largest − smallest): a variant differing from the reference by
        no more than this is within seed noise. With two seeds it is their difference; each further seed can
        only widen it."""
        return max(self.accuracies) - min(self.accuracies)

    @property
    def standard_deviation(self) -> float:
        """Sample standard deviation of the seeds' accuracies (n − 1 in the denominator); from 2 or 3 seeds
        it is itself a rough estimate."""
        return float(np.std(self.accuracies, ddof=1))

    def describe(self, split: str) -> str:
        """One sentence for a caption."""
        each = ", ".join(f"{name} {accuracy:.1%}" for name, accuracy in zip(self.seeds, self.accuracies))
        return (f"{len(self.seeds)} seeds of the full model on {split} ({self.pairs} pairs every seed predicted): "
                f"{each}; range {self.gap:.1%}, standard deviation {self.standard_deviation:.1%}")


def seed_noise(*predictions: Predictions, names: Sequence[str] | None = None) -> SeedNoise:
    """The accuracies of two or more seeds of the same config on the labelled pairs all of them predicted;
    ValueError when fewer than two are given, or two share no labelled pair or disagree on a gold label
    (not the same split)."""
    if len(predictions) < 2:
        raise ValueError(f"seed noise needs at least two seeds; got {len(predictions)}")
    names = tuple(names) if names is not None else tuple(f"seed {i + 1}" for i in range(len(predictions)))
    if len(names) != len(predictions):
        raise ValueError(f"{len(names)} names for {len(predictions)} seeds")
    for other in predictions[1:]:
        compare_models(other, predictions[0], resamples=1)  # raises for another split or no shared pair
    frames = [predictions_frame(p) for p in predictions]
    frames = [f[f["gold"].notna()][["id", "correct"]] for f in frames]
    shared = set(frames[0]["id"]).intersection(*(set(f["id"]) for f in frames[1:]))
    accuracies = tuple(float(f[f["id"].isin(shared)]["correct"].astype(bool).mean()) for f in frames)
    return SeedNoise(names, accuracies, len(shared))


def compare_variants(reference: Predictions, variants: Mapping[str, Predictions], noise: SeedNoise | None = None,
                     level: float = SIGNIFICANCE_LEVEL) -> pd.DataFrame:
    """Each variant against the reference on their shared labelled pairs: accuracies, difference with its
    95% paired-bootstrap interval, McNemar's exact p, its Holm-adjusted p over the table's variants and
    Benjamini–Hochberg q, and whether it is significant (Holm p < `level`), then — with `noise` — `within
    seed noise`: whether |difference| is no larger than the range of the full model's seeds (a significant
    difference can be one that re-training alone gives), then the discordant counts. Variants sharing no
    pair get a `problem`."""
    rows = []
    for name, predictions in variants.items():
        try:
            result = compare_models(predictions, reference)
        except ValueError as error:
            rows.append({"variant": name, "problem": str(error)})
            continue
        row = {"variant": name, "pairs": result.pairs, "accuracy": result.accuracy_a,
               "reference accuracy": result.accuracy_b, "difference": result.difference.estimate,
               "CI low": result.difference.low, "CI high": result.difference.high,
               "McNemar p": result.mcnemar_p, "Holm p": np.nan, "BH q": np.nan, "significant": False}
        if noise is not None:  # beside `significant`: a significant difference can still be one re-training gives
            row["within seed noise"] = bool(abs(result.difference.estimate) <= noise.gap)
        row.update({"only variant right": result.only_a_correct, "only reference right": result.only_b_correct})
        rows.append(row)
    table = pd.DataFrame(rows)
    return _with_adjusted_p(table, level)


def _with_adjusted_p(table: pd.DataFrame, level: float) -> pd.DataFrame:
    """`Holm p`, `BH q` and `significant` (Holm p < level) over the rows that have a McNemar p: one family."""
    if "McNemar p" not in table or table.empty:
        return table
    tested = table["McNemar p"].notna()
    p_values = table.loc[tested, "McNemar p"].tolist()
    table.loc[tested, "Holm p"] = holm_adjusted(p_values)
    table.loc[tested, "BH q"] = benjamini_hochberg(p_values)
    table["significant"] = (table["Holm p"] < level) & tested
    return table


def tag_deltas(reference: Predictions, variants: Mapping[str, Predictions], tags: Mapping[str, frozenset[str]],
               unavailable: Mapping[str, str] | None = None, level: float = SIGNIFICANCE_LEVEL,
               approximate: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per annotation tag and variant: the reference's and the variant's accuracy on the tagged pairs, the
    difference (variant − reference), McNemar's p on those pairs, its Holm-adjusted p and Benjamini–Hochberg
    q over every tag × variant test of the table (one family), and `significant` (Holm p < `level`). Tags
    no pair carries are left out, as are variants whose predictions share no labelled pair with the
    reference's or disagree with them on a gold label (not the same split). Each variant is joined with the
    reference once and every tag is a mask over that join (joining per tag made the Ablations page take
    seconds per rerun). `tag status` is "ok" or, for a tag in `approximate` (automatic tags whose rule
    agrees poorly with the annotators, `tags.approximate_tags`), "approximate: …"."""
    columns = ["variant", "tag", "tag status", "count", "reference accuracy", "accuracy", "delta", "McNemar p",
               "Holm p", "BH q", "significant"]
    reference_by_tag = accuracy_by_tag(reference, tags, unavailable=unavailable,
                                       approximate=approximate).set_index("tag")
    reference_frame = predictions_frame(reference)
    reference_frame = reference_frame[reference_frame["gold"].notna()][["id", "gold", "correct"]]
    tagged_ids = {tag: {pair_id for pair_id, pair_tags in tags.items() if tag in pair_tags}
                  for tag in reference_by_tag.index}
    rows = []
    for name, predictions in variants.items():
        frame = predictions_frame(predictions)
        joined = frame[frame["gold"].notna()][["id", "gold", "correct"]].merge(reference_frame, on="id",
                                                                               suffixes=("", " reference"))
        if joined.empty or (joined["gold"] != joined["gold reference"]).any():
            continue
        correct = joined["correct"].astype(bool).to_numpy()
        reference_correct = joined["correct reference"].astype(bool).to_numpy()
        for tag, count in reference_by_tag["count"].items():
            if not count or np.isnan(count):  # no pair carries it, or it cannot be computed (unavailable)
                continue
            mask = joined["id"].isin(tagged_ids[tag]).to_numpy()
            if not mask.any():
                continue
            only_variant, only_reference = discordant_counts(correct[mask], reference_correct[mask])
            p_value = mcnemar_exact(only_variant, only_reference)
            accuracy, reference_accuracy = float(correct[mask].mean()), float(reference_correct[mask].mean())
            rows.append({"variant": name, "tag": tag, "tag status": reference_by_tag.loc[tag, "status"],
                         "count": int(mask.sum()), "reference accuracy": reference_accuracy,
                         "accuracy": accuracy, "delta": accuracy - reference_accuracy, "McNemar p": p_value})
    return _with_adjusted_p(pd.DataFrame(rows, columns=columns), level)


def paper_ablations(model: str, ours: Mapping[str, Mapping[str, float]] | None = None, trained: Collection[str] = (),
                    dataset: str | None = None) -> pd.DataFrame:
    """The paper's ablation and variant rows for a model family, one row per reported accuracy: table,
    paper row, the config reproducing it (`our config`), what it was reported on (full data) and the
    value in %; the time per epoch or parameter count the same row reports, when it does; with `ours`
    (config name → split key → accuracy in %, `our_accuracies`) our number on the same split, or on its stand-in
    where we lack that split or `trained` on it (`paper_tables.our_split`: MultiNLI's test sets have no public
    labels, so their dev sets of the same genres stand in), in `OURS`, and which split that is in `OURS_ON`
    ("snli_dev", "mnli_dev_matched (stand-in)"; "—" where we have none). With `dataset` (a paper tables' dataset
    name, see `paper_tables.paper_dataset`) only that dataset's rows: our snli-small numbers must not sit beside
    MultiNLI or Quora rows. Empty for a family without a paper (e.g. esim) or without rows on `dataset`."""
    paper_id = FAMILY_PAPERS.get(model)
    if paper_id is None:
        return pd.DataFrame()
    variants = ablation_results()
    main = paper_table(paper_id, kind="main")
    frame = pd.concat([variants[variants["paper_id"] == paper_id], main[main["own"]]], ignore_index=True)
    frame = frame.drop_duplicates(subset=["table", "model", "dataset", "split", "metric"])
    config_of = {row: config for config, rows in PAPER_ROWS.items() if config.split("-")[0] == model for row in rows}
    extras = (("time_per_epoch", "reported time per epoch (s)"), ("parameters", "reported parameters"))
    order = {key: position for position, key in enumerate(dict.fromkeys(zip(frame["table"], frame["model"])))}
    rows = []
    reported = frame[(frame["metric"] == "accuracy") & (frame["split"] != "train")]
    if dataset is not None:
        reported = reported[reported["dataset"] == dataset]
    for _, row in reported.iterrows():
        entry = {"table": row["table"], "paper row": row["model"], "our config": config_of.get(row["model"], "—"),
                 "reported on (full data)": f"{row['dataset']} {row['split']}", "reported accuracy (%)": row["value"]}
        for metric, label in extras:
            same = frame[(frame["table"] == row["table"]) & (frame["model"] == row["model"]) & (frame["metric"] == metric)]
            if len(same):
                entry[label] = same["value"].iloc[0]
        if ours is not None:
            scored = ours.get(config_of.get(row["model"], ""), {})
            key, same = our_split(row["dataset"], row["split"], scored, trained)
            entry[OURS] = scored[key] if key else np.nan
            entry[OURS_ON] = "—" if key is None else key if same else f"{key} (stand-in)"
        rows.append(entry)
    rows.sort(key=lambda entry: order[(entry["table"], entry["paper row"])])  # a paper row's columns together
    table = pd.DataFrame(rows)
    table.attrs["paper"] = PAPERS[paper_id]["short"]
    if table.empty:
        return table
    if OURS in table:  # ours right beside the paper's number
        columns = [c for c in table.columns if c not in (OURS, OURS_ON)]
        at = columns.index("reported accuracy (%)") + 1
        table = table[columns[:at] + [OURS, OURS_ON] + columns[at:]]
        table.attrs["paper"] = PAPERS[paper_id]["short"]
    return table
