"""The before → after report of a fix (README "Targeted augmentation"): a changed checkpoint (an augmented run)
judged against its compute-matched control on the same pairs — the select split's recorded predictions, the
behavioural suite's capabilities and every challenge file, overall and by category — with McNemar's exact test on
the pairs only one of them gets right, Holm over the rows of a table, and the significant regressions first. When
the control has other seeds (`-seed2` … folders beside it: the same command, another seed), each row also carries
their accuracies on its pairs, and a significant loss that leaves the changed checkpoint no worse than the worst of
them is not a regression: at every template case two seeds of one command differ significantly on several
capabilities (README, "Seeds of the control").

`scripts/augment_report.py` and the Train page's report view both build it with `build_report`; what each reads
through is injected (`ReportSources`): the script runs `python -m nlivis probe` and `evaluate` commands, the app
its caches. Nothing here loads a model or writes a file."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from nlivis.analysis.probes import INDEPENDENT, capability_comparisons
from nlivis.analysis.significance import (discordant_counts, holm_adjusted, mcnemar_exact, wilson_interval,
                                          within_seed_range)
from nlivis.analysis.swap_discrimination import SwapDiscrimination, swap_discrimination
from nlivis.store.checkpoints import CheckpointError, read_json
from nlivis.store.predictions import Prediction

SIGNIFICANT = 0.05
"""A row is a significant regression when it got worse, its Holm-adjusted p is below this, and (when the control has
other seeds) the changed checkpoint is worse than every seed of the control on its pairs."""
SELECT_SPLIT = "snli_dev"
"""The split the script compares from recorded predictions (`predictions_snli_dev.jsonl.gz`)."""

Outcomes = Mapping[str, tuple[str | None, str]]
"""Pair id → (gold label or None, predicted label)."""
Progress = Callable[[str], None]
INDEPENDENT_ONLY = (INDEPENDENT,)
"""The suite's generators that speak for a fix (the engine's tests are built like the augmentation itself)."""


def outcomes(predictions: Sequence[Prediction]) -> dict[str, tuple[str | None, str]]:
    """id → (gold, predicted) of a checkpoint's predictions."""
    return {p.id: (p.gold, p.predicted) for p in predictions}


@dataclass(frozen=True)
class Comparison:
    """Two checkpoints right or wrong on the same labelled pairs: how many each gets right, how many only one
    does, and McNemar's exact p on those (the pairs both get right or both wrong carry no evidence)."""

    pairs: int
    right_before: int
    right_after: int
    only_before_right: int
    only_after_right: int
    p: float

    @property
    def before(self) -> float:
        return self.right_before / self.pairs if self.pairs else math.nan

    @property
    def after(self) -> float:
        return self.right_after / self.pairs if self.pairs else math.nan

    @property
    def change(self) -> float:
        return self.after - self.before

    @property
    def interval_before(self) -> tuple[float, float]:
        """Wilson 95% interval of the control's accuracy."""
        return wilson_interval(self.right_before, self.pairs)

    @property
    def interval_after(self) -> tuple[float, float]:
        return wilson_interval(self.right_after, self.pairs)


def paired(before: Outcomes, after: Outcomes, ids: Sequence[str] | None = None) -> Comparison:
    """The comparison on the labelled pairs both hold (among `ids` when given)."""
    candidates = before if ids is None else ids
    shared = [i for i in candidates if i in before and i in after and before[i][0] is not None]
    correct_before = [before[i][0] == before[i][1] for i in shared]
    correct_after = [after[i][0] == after[i][1] for i in shared]
    only_before, only_after = discordant_counts(correct_before, correct_after)
    return Comparison(len(shared), sum(correct_before), sum(correct_after), only_before, only_after,
                      mcnemar_exact(only_before, only_after))


def seed_accuracies(before: Outcomes, after: Outcomes, seeds: Sequence[Outcomes], ids: Sequence[str] | None = None
                    ) -> tuple[float, ...]:
    """The accuracies of the control and of its other seeds (`seeds`) on the labelled pairs all of them and the
    changed checkpoint hold (among `ids` when given); () without another seed or a shared pair."""
    candidates = before if ids is None else ids
    shared = [i for i in candidates if i in before and i in after and before[i][0] is not None
              and all(i in seed for seed in seeds)]
    if not seeds or not shared:
        return ()
    return tuple(sum(found[i][0] == found[i][1] for i in shared) / len(shared) for found in (before, *seeds))


@dataclass(frozen=True)
class ReportRow:
    """One line of a table of the report: what it compares (a split, a capability, a file, a category), the
    comparison, its Holm-adjusted p over the lines of its table and whether it is a significant regression.
    Behavioural-suite lines also say their generator and how many tests they pool."""

    name: str
    comparison: Comparison
    p_holm: float = math.nan
    regression: bool = False
    generator: str | None = None
    tests: int = 0
    answers: tuple[Mapping[str, int], Mapping[str, int]] | None = None
    """Behavioural-suite lines: what the control and the changed checkpoint answered on the cases each failed,
    "expected → said" → cases (`analysis.probes.failure_answers`)."""
    seeds: tuple[float, ...] = ()
    """The accuracies of the control and its other seeds on this line's pairs (`seed_accuracies`), () when the
    control has no other seed."""

    @property
    def worse(self) -> bool:
        """The changed checkpoint gets fewer of the pairs right than its control."""
        return self.comparison.right_after < self.comparison.right_before

    @property
    def seed_range(self) -> tuple[float, float] | None:
        """The lowest and highest of the control seeds' accuracies on this line's pairs (None without another
        seed)."""
        return (min(self.seeds), max(self.seeds)) if self.seeds else None

    @property
    def seed_gap(self) -> float | None:
        """The range of the control seeds' accuracies on this line's pairs (None without another seed)."""
        return self.seed_range[1] - self.seed_range[0] if self.seeds else None

    @property
    def within_control_seeds(self) -> bool:
        """The changed checkpoint is no worse than the worst of the control's seeds on the same pairs (False
        without seeds)."""
        return bool(self.seeds) and within_seed_range(self.comparison.after, self.seeds)

    @property
    def loss_within_seeds(self) -> bool:
        """A significant loss (Holm) that the control's seeds account for, so not a regression: what the script
        and the page mark as within the control's seed spread."""
        return self.worse and self.p_holm < SIGNIFICANT and self.within_control_seeds


def answers_text(answers: Mapping[str, int]) -> str:
    """A suite line's answers (`ReportRow.answers`, one side) in words: "entailment → neutral 44, …", or "—"."""
    return ", ".join(f"{answer} {count}" for answer, count in answers.items()) or "—"


def order_key(row: ReportRow) -> tuple[bool, bool]:
    """Significant regressions, then the other rows getting worse, then the rest (a stable sort keeps each
    group's order)."""
    return not row.regression, not row.worse


def regressions_first(rows: Sequence[ReportRow]) -> list[ReportRow]:
    return sorted(rows, key=order_key)


def holm_flagged(rows: Sequence[ReportRow]) -> list[ReportRow]:
    """The rows of one table, in their order, with Holm's adjustment over their McNemar p, each flagged a
    regression when it got worse with adjusted p < `SIGNIFICANT` and is worse than every seed of the control."""
    adjusted = holm_adjusted([row.comparison.p for row in rows])
    return [replace(row, p_holm=p, regression=row.worse and p < SIGNIFICANT and not row.within_control_seeds)
            for row, p in zip(rows, adjusted)]


def judged(rows: Sequence[ReportRow]) -> list[ReportRow]:
    """`holm_flagged` rows in `regressions_first` order."""
    return regressions_first(holm_flagged(rows))


def category_rows(groups: Mapping[str, Sequence[str]], before: Outcomes, after: Outcomes,
                  seeds: Sequence[Outcomes] = ()) -> list[ReportRow]:
    """One row per category of a file (pair id → its categories; a pair counts in each), most pairs first,
    McNemar on the category's pairs, Holm over the categories; the control's other `seeds` give each its
    `seed_accuracies`."""
    members: dict[str, list[str]] = {}
    for pair_id, values in groups.items():
        for value in values or ():
            members.setdefault(value, []).append(pair_id)
    ordered = sorted(members.items(), key=lambda item: -len(item[1]))
    return judged([ReportRow(value, paired(before, after, ids), seeds=seed_accuracies(before, after, seeds, ids))
                   for value, ids in ordered])


def probe_rows(record: Mapping[str, Any], before: str, after: str,
               generators: Sequence[str] | None = None, seeds: Sequence[str] = ()) -> list[ReportRow]:
    """The behavioural suite's capabilities (`capability_comparisons` of a `probe --json` record: the cases of a
    capability's tests pooled), as accuracy on the cases (1 − failure rate); only `generators` when given
    (Holm over the rows kept); `seeds`, the control's other seeds in the record, give each its seeds' accuracies."""
    seed_rates: dict[tuple[str, str], list[float]] = {}
    for seed in seeds:
        for found in capability_comparisons(dict(record), before, seed):
            seed_rates.setdefault((found["generator"], found["capability"]), [found["rate_a"]]).append(found["rate_b"])
    rows = []
    for found in capability_comparisons(dict(record), before, after):
        if generators is not None and found["generator"] not in generators:
            continue
        cases = found["cases"]
        comparison = Comparison(cases, cases - found["failures_a"], cases - found["failures_b"],
                                found["only_b_fails"], found["only_a_fails"], found["p"])
        answers = (dict(found["answers_a"].most_common()), dict(found["answers_b"].most_common()))
        rates = seed_rates.get((found["generator"], found["capability"]))
        rows.append(ReportRow(found["capability"], comparison, generator=found["generator"], tests=found["tests"],
                              answers=answers, seeds=tuple(1 - rate for rate in rates) if rates else ()))
    return judged(rows)


@dataclass(frozen=True)
class HeldOutFile:
    """A challenge file (or several read as one) the report runs, and the field whose values are its categories
    (None: the file as a whole only)."""

    name: str
    files: tuple[Path, ...]
    group: str | None = None


CATEGORY_FIELDS = ("tags", "heuristic", "subcase", "file")
"""The fields a challenge file is split into categories by, the first it has (ANLI's annotated tags, HANS's
heuristic and subcase, a stress test's file)."""


def held_out_file(files: Sequence[Path], fields: Mapping[str, int]) -> HeldOutFile:
    """A challenge file as the report runs it, given each of its fields' number of distinct values: by the first of
    `CATEGORY_FIELDS` with two values or more (one value would repeat the file's own line), else as a whole."""
    group = next((name for name in CATEGORY_FIELDS if fields.get(name, 0) > 1), None)
    return HeldOutFile(", ".join(Path(f).name for f in files), tuple(Path(f) for f in files), group)


def field_values(challenge: Any) -> dict[str, int]:
    """Each `CATEGORY_FIELDS` field a read challenge set has → its number of distinct values."""
    return {name: len({v for values in challenge.groups(name).values() for v in values})
            for name in CATEGORY_FIELDS if name in challenge.field_names()}


@dataclass(frozen=True)
class FileOutcomes:
    """What a source read for one file: both checkpoints' outcomes, the pairs' categories (when the file is
    grouped), and what the evaluation said about the training split and truncation (the script's, from
    `evaluate --json`)."""

    before: Outcomes
    after: Outcomes
    groups: Mapping[str, Sequence[str]] | None = None
    training_overlap: Mapping[str, Any] | None = None
    truncated: Any = None
    control_seeds: tuple[Outcomes, ...] = ()
    """The outcomes of the control's other seeds on the file, when the source read them."""


@dataclass(frozen=True)
class FileReport:
    """One file's line (Holm over the files of the report) and its categories (Holm over its categories)."""

    file: HeldOutFile
    row: ReportRow
    categories: list[ReportRow] = field(default_factory=list)
    training_overlap: Mapping[str, Any] | None = None
    truncated: Any = None


@dataclass(frozen=True)
class SeedNoise:
    """The control's recorded select accuracy against its `-seed2` sibling's: how far a seed alone moves it."""

    seed2: str
    seed2_accuracy: float
    gap: float


def seed_noise(base: Path) -> SeedNoise | None:
    """The gap between checkpoint `base` and the `-seed2` folder beside it, when there is one."""
    sibling = base.with_name(base.name + "-seed2")
    if not (sibling / "metrics.json").is_file():
        return None
    accuracy = {p.name: json.loads((p / "metrics.json").read_text())["best_dev_accuracy"] for p in (base, sibling)}
    return SeedNoise(sibling.name, accuracy[sibling.name], abs(accuracy[base.name] - accuracy[sibling.name]))


def control_seed_folders(base: Path) -> list[Path]:
    """The other seeds of control `base`: the finished folders beside it of its name without a `-seed<N>` suffix
    (seed 1) and with `-seed<N>` (N ≥ 2), by N — `esan-snli-small-matched-seed2`'s is `esan-snli-small-matched`."""
    stem = re.sub(r"-seed\d+$", "", base.name)
    numbered = [(int(p.name[len(stem) + 5:]), p) for p in base.parent.glob(f"{stem}-seed*")
                if re.fullmatch(r"\d+", p.name[len(stem) + 5:])]
    found = [(1, base.parent / stem)] + [(n, p) for n, p in numbered if n >= 2]
    return [p for _, p in sorted(found) if p.name != base.name and (p / "metrics.json").is_file()]


def recorded_control(folder: str | Path) -> str | None:
    """The compute-matched control a checkpoint's config.json names (`augmentation.control`), or None."""
    try:
        control = read_json(Path(folder), "config.json").get("augmentation", {}).get("control")
    except (CheckpointError, AttributeError):
        return None
    return control if isinstance(control, str) and control else None


@dataclass(frozen=True)
class ReportSources:
    """Where `build_report` reads. `select(checkpoint)`: its outcomes on the select split (None: not recorded);
    `probes()`: a `probe --json` record holding both checkpoints (and the control's other seeds) and their names
    in it — before, after, then each of `control_seeds` it holds (None: not run); `file(held_out)`: both
    checkpoints' outcomes on a file, and the control seeds' when read (None: not evaluated). `control_seeds`: the
    names `select` takes for the control's other seeds (`control_seed_folders`)."""

    select: Callable[[str], Outcomes | None]
    probes: Callable[[], tuple[Mapping[str, Any], Sequence[str]] | None]
    file: Callable[[HeldOutFile], FileOutcomes | None]
    control_seeds: tuple[str, ...] = ()


@dataclass(frozen=True)
class AugmentReport:
    """Checkpoint `after` against its control `before`: the select split, the behavioural suite's capabilities
    (those of `probe_generators`), every file that both were evaluated on, and what could not be compared."""

    before: str
    after: str
    select_split: str
    select: ReportRow | None
    probes: list[ReportRow]
    files: list[FileReport]
    missing: list[str] = field(default_factory=list)
    swaps: list[tuple[str, SwapDiscrimination]] = field(default_factory=list)
    """(checkpoint, `SwapDiscrimination`) of the control, the changed checkpoint and the control's other seeds, in
    that order (`labelled_swaps`), where the suite holds both groups of swaps: did the change teach which swaps
    contradict, or only to say contradiction more often?"""

    def labelled_swaps(self) -> list[tuple[str, str, SwapDiscrimination]]:
        """(role: "control", "changed" or "control seed", checkpoint, its `SwapDiscrimination`) of `swaps`."""
        return [(("control", "changed")[i] if i < 2 else "control seed", name, found)
                for i, (name, found) in enumerate(self.swaps)]

    def tables(self) -> list[tuple[str, list[ReportRow]]]:
        """(table name, rows) in the report's order: the select split, the suite, the files, each file's categories."""
        tables = [(self.select_split, [self.select])] if self.select is not None else []
        if self.probes:
            tables.append(("behavioural suite", self.probes))
        if self.files:
            tables.append(("challenge files", [found.row for found in self.files]))
        tables += [(f"{found.file.name} by {found.file.group}", found.categories) for found in self.files
                   if found.categories]
        return tables

    def regressions(self) -> list[tuple[str, ReportRow]]:
        """(table, row) of every significant regression, in table order."""
        return [(table, row) for table, rows in self.tables() for row in rows if row.regression]

    def record(self) -> dict[str, Any]:
        """Every number as JSON-ready data (the script's `--json`)."""
        def row(found: ReportRow) -> dict[str, Any]:
            compared = found.comparison
            return {**asdict(found), "seed_gap": found.seed_gap, "before": compared.before, "after": compared.after,
                    "interval_before": compared.interval_before, "interval_after": compared.interval_after}

        return {"before": self.before, "after": self.after, self.select_split: row(self.select) if self.select else None,
                "probes": [row(r) for r in self.probes], "missing": self.missing,
                "swap_discrimination": [{"role": role, "checkpoint": name, **asdict(found),
                                         "discrimination": found.discrimination, "interval": found.interval}
                                        for role, name, found in self.labelled_swaps()],
                "files": [{"name": f.file.name, "files": [str(p) for p in f.file.files], "group": f.file.group,
                           **row(f.row), "categories": [row(r) for r in f.categories],
                           "training_overlap": f.training_overlap, "truncated": f.truncated} for f in self.files]}


def build_report(before: str, after: str, sources: ReportSources, files: Sequence[HeldOutFile] = (), *,
                 select_split: str = SELECT_SPLIT, probe_generators: Sequence[str] | None = None,
                 progress: Progress = lambda message: None) -> AugmentReport:
    """The report of checkpoint `after` against `before`, phase by phase (the select split, the suite, the files),
    each saying itself to `progress`; what a source does not have is listed in `missing`."""
    missing: list[str] = []
    progress(f"report: {select_split} from the recorded predictions")
    outcome = sources.select(before), sources.select(after)
    select = None
    if outcome[0] is None or outcome[1] is None:
        missing.append(f"{select_split}: not recorded by both checkpoints")
    else:
        seeds = [found for found in map(sources.select, sources.control_seeds) if found is not None]
        select = judged([ReportRow(select_split, paired(*outcome), seeds=seed_accuracies(*outcome, seeds))])[0]
    progress("report: the behavioural suite")
    probes = sources.probes()
    if probes is None:
        missing.append("behavioural suite: not run on both checkpoints")
    probe_table = (probe_rows(probes[0], probes[1][0], probes[1][1], probe_generators, probes[1][2:])
                   if probes is not None else [])
    found_swaps = [swap_discrimination(probes[0], name) for name in probes[1]] if probes is not None else []
    swaps = list(zip(probes[1], found_swaps)) if found_swaps and all(found_swaps) else []
    reports = []
    for held_out in files:
        progress(f"report: {held_out.name}")
        read = sources.file(held_out)
        if read is None:
            missing.append(f"{held_out.name}: not evaluated by both checkpoints")
            continue
        seeds = read.control_seeds
        categories = category_rows(read.groups, read.before, read.after, seeds) if read.groups is not None else []
        line = ReportRow(held_out.name, paired(read.before, read.after),
                         seeds=seed_accuracies(read.before, read.after, seeds))
        reports.append(FileReport(held_out, line, categories, read.training_overlap, read.truncated))
    flagged = holm_flagged([found.row for found in reports])
    reports = [replace(found, row=row) for found, row in zip(reports, flagged)]
    reports.sort(key=lambda found: order_key(found.row))
    return AugmentReport(before, after, select_split, select, probe_table, reports, missing, swaps)
