"""Before → after tables of targeted augmentation (README "Targeted augmentation"), from nlivis's own commands.

    python scripts/augment_report.py --pair checkpoints/esan-snli-small checkpoints/esan-snli-small-augmented \
        [--pair BASE AUGMENTED …] [--data-dir ../shared/data] [--probes-only] [--max-cases N] [--file PATH …]
        [--json FILE]

For each (baseline, augmented) pair of checkpoints of one model and protocol:
- the select split both recorded (the control's `select_split`: SNLI dev, `predictions_snli_dev.jsonl.gz`, for
  snli-small; XNLI-en dev for mnli-small): accuracy before → after, the
  change, McNemar's exact test on the same pairs, and the baseline's seed noise — the gap between the baseline
  and its `-seed2` checkpoint when one sits beside it;
- the NLI probe suite (`python -m nlivis probe … --suite nli --data-dir D --json`, every checkpoint in one run),
  its engine-built and independent tests apart (only the independent ones and held-out files speak for a fix):
  failure rate per capability before → after, McNemar on the pooled cases of the capability's tests,
  Holm-adjusted over the capabilities (`nlivis.analysis.probes.capability_comparisons`); `--max-cases N` runs up
  to N cases a test instead of the suite's 110, for the power a held-out set of a thousand pairs has;
- unless --probes-only, the held-out public sets through `python -m nlivis evaluate CK --file F --data-dir D
  --json`: ANLI dev R1–R3 (with its categories, `--group-by tags`), ConjNLI dev, MultiNLI dev hard matched and
  mismatched — accuracy before → after with McNemar on the kept predictions (Holm over the sets of a model),
  and how many pairs, premises and hypotheses each set shares with the training split; for mnli-small pairs,
  MultiNLI dev matched and mismatched by TaxiNLI's categories (`taxinli/taxinli10k_MNLIDev.tsv`, from the
  recorded predictions); and each `--file` (a
  challenge file of your own, by its categories when it has tags, heuristic, subcase or file values).
Judge a fix against its compute-matched control (`--pair checkpoints/esan-snli-small-matched
checkpoints/esan-snli-small-augmented`: the same steps on the original pairs), never against a shorter
baseline alone. The control's other seeds beside it (`<control>-seed2` …, or for a seed-2 control the name without
the suffix) are probed and evaluated with it, and each line gives their range on its pairs (lowest–highest); a
significant loss that leaves the augmented run no worse than the worst control seed is marked within the control's
seed spread and is no regression (`nlivis.workflows.augment_report.control_seed_folders`, `seed_accuracies`).
Every table lists its significant regressions first (after worse than before, Holm-adjusted p < 0.05, beyond the
seed spread, marked **regression**), then the other rows getting worse, then the rest; each held-out set's
categories are tested too (McNemar per category, Holm over the categories of the set).
Every command it runs is printed to stderr and listed in the output; it changes nothing but the checkpoints'
ignored `evaluations/` folders. The report itself is `nlivis.workflows.augment_report.build_report`'s, which the
Train page's *Before and after* tab builds too (from the app's caches instead of these commands).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST, EVERY_TEMPLATE_CASE  # noqa: E402
from nlivis.data.challenge import read_challenge_files  # noqa: E402
from nlivis.data.protocols import SplitRef, read_split  # noqa: E402
from nlivis.data.taxonomies import find_taxinli_file, join_to_pairs, read_taxinli  # noqa: E402
from nlivis.store.predictions import find_prediction_files, read_predictions  # noqa: E402
from nlivis.workflows.augment_report import (AugmentReport, FileOutcomes, HeldOutFile,  # noqa: E402
                                             ReportRow, ReportSources, answers_text, build_report,
                                             control_seed_folders, field_values, held_out_file, outcomes, seed_noise)

HELD_OUT = (  # (name, files under the data root, group-by field)
    ("ANLI dev R1–R3", ("anli_annotated/ANLI_analysis_r1_dev.csv", "anli_annotated/ANLI_analysis_r2_dev.csv",
                        "anli_annotated/ANLI_analysis_r3_dev.csv"), "tags"),
    ("ConjNLI dev", ("conjnli/conj_dev.tsv",), None),
    ("MultiNLI dev hard matched", ("mnli_hard/matched/s1.test",), None),
    ("MultiNLI dev hard mismatched", ("mnli_hard/mismatched/s1.test",), None),
)
TAXINLI_GROUP = "TaxiNLI categories"
"""The group of the MultiNLI dev halves read from recorded predictions and split by TaxiNLI's categories."""


def taxinli_held_out(data: Path, pairs: list[tuple[Path, Path]]) -> list[HeldOutFile]:
    """MultiNLI dev matched and mismatched, the pairs TaxiNLI categorises, by its categories: for pairs that both
    recorded predictions on the two halves (mnli-small checkpoints report on them, never train on them) when the
    TaxiNLI file is in the data folder; none otherwise."""
    path = find_taxinli_file(data)
    recorded = all(f"mnli_dev_{half}" in find_prediction_files(folder)
                   for pair in pairs for folder in pair for half in ("matched", "mismatched"))
    if path is None or not recorded:
        return []
    return [HeldOutFile(f"MultiNLI dev {half}, TaxiNLI pairs", (path,), TAXINLI_GROUP)
            for half in ("matched", "mismatched")]


def select_split(base: Path) -> str:
    """The split the control was selected on (metrics.json's `select_split`: snli_dev, xnli_en_dev for
    mnli-small), which both checkpoints of a pair recorded predictions on."""
    metrics = base / "metrics.json"
    if not metrics.is_file():
        raise SystemExit(f"{base}: no metrics.json (not a finished checkpoint folder)")
    return json.loads(metrics.read_text(encoding="utf-8"))["select_split"]


def flag(row: ReportRow) -> str:
    """**regression**, or, for a significant loss that leaves the run within its control's seeds, that it is none."""
    if row.regression:
        return " **regression**"
    return " (significant, within the control's seed spread)" if row.loss_within_seeds else ""


def spread(row: ReportRow, failures: bool = False) -> str:
    """The control seeds' range on a line, lowest–highest, as accuracy % or (`failures`) failure % (— without
    another seed)."""
    if row.seed_range is None:
        return "—"
    low, high = row.seed_range
    return f"{pct(1 - high)}–{pct(1 - low)}" if failures else f"{pct(low)}–{pct(high)}"


def run_json(command: list[str]) -> dict:
    """A `python -m nlivis … --json` command's output; its stderr passes through."""
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}")
    return json.loads(done.stdout)


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def p_text(value: float) -> str:
    return "1" if value >= 0.9995 else (f"{value:.3f}" if value >= 0.001 else f"{value:.1e}")


class CommandSources:
    """Where the script's reports read: recorded predictions from the folders, one `probe` run over every
    checkpoint, and an `evaluate --json` command per checkpoint and held-out file; every command is kept."""

    def __init__(self, pairs: list[tuple[Path, Path]], data_dir: str, probes: bool,
                 max_cases: int = DEFAULT_CASES_PER_TEST):
        self.data_dir, self.max_cases, self.commands = data_dir, max_cases, []
        self.seeds = {base: control_seed_folders(base) for base, _ in pairs}
        """Each control's other seeds (`-seed2` … beside it), probed and evaluated with it for their spread."""
        self.folders = list(dict.fromkeys(str(p) for base, augmented in pairs
                                          for p in (base, augmented, *self.seeds[base])))
        """Each folder once, as `probe` lists them: a control shared by several pairs is probed once."""
        self.record = self.probe_record() if probes else None

    def probe_command(self) -> list[str]:
        cases = [] if self.max_cases == DEFAULT_CASES_PER_TEST else ["--max-cases", str(self.max_cases)]
        return [sys.executable, "-m", "nlivis", "probe", *self.folders, "--suite", "nli", "--data-dir",
                self.data_dir, *cases, "--json"]

    def probe_record(self) -> dict:
        command = self.probe_command()
        self.commands.append(" ".join(["python", *command[1:]]))
        return run_json(command)

    def for_pair(self, base: Path, augmented: Path) -> ReportSources:
        def probes():
            names = list(self.record["checkpoints"])
            return self.record, [names[self.folders.index(str(p))] for p in (base, augmented, *self.seeds[base])]

        predictions = f"predictions_{select_split(base)}.jsonl.gz"
        return ReportSources(select=lambda folder: outcomes(read_predictions(Path(folder) / predictions)),
                             probes=probes if self.record is not None else lambda: None,
                             file=lambda held_out: self.evaluated(base, augmented, held_out),
                             control_seeds=tuple(str(p) for p in self.seeds[base]))

    def evaluated(self, base: Path, augmented: Path, held_out: HeldOutFile) -> FileOutcomes:
        if held_out.group == TAXINLI_GROUP:
            return self.taxinli(base, augmented, held_out)
        results = []
        for checkpoint in (base, augmented, *self.seeds[base]):
            command = [sys.executable, "-m", "nlivis", "evaluate", str(checkpoint),
                       *(x for f in held_out.files for x in ("--file", str(f))),
                       *(["--group-by", held_out.group] if held_out.group else []), "--data-dir", self.data_dir,
                       "--json"]
            self.commands.append(" ".join(["python", *command[1:]]))
            results.append(run_json(command))
        found = [outcomes(read_predictions(Path(result["predictions_file"]))) for result in results]
        groups = read_challenge_files(list(held_out.files)).groups(held_out.group) if held_out.group else None
        return FileOutcomes(found[0], found[1], groups, results[0]["training_overlap"], results[0]["truncated"],
                            tuple(found[2:]))


    def taxinli(self, base: Path, augmented: Path, held_out: HeldOutFile) -> FileOutcomes:
        """Both checkpoints' recorded predictions on one MultiNLI dev half, kept to the pairs TaxiNLI categorises
        (joined by pairID as `scripts/taxinli_table.py` does), with each pair's categories."""
        split = "mnli_dev_mismatched" if "mismatched" in held_out.name else "mnli_dev_matched"
        pairs = read_split(SplitRef("mnli", split.removeprefix("mnli_"), "mnli_dev"), self.data_dir).pairs
        rows = join_to_pairs(read_taxinli(held_out.files[0]).rows, pairs)
        found = [outcomes(read_predictions(find_prediction_files(folder)[split]))
                 for folder in (base, augmented, *self.seeds[base])]
        before, after, *seeds = ({pair_id: o for pair_id, o in f.items() if pair_id in rows} for f in found)
        self.commands.append(f"(recorded predictions_{split}.jsonl.gz of both, joined to {held_out.files[0]} by pairID)")
        return FileOutcomes(before, after, {pair_id: sorted(row.categories) for pair_id, row in rows.items()},
                            {"checked": False}, control_seeds=tuple(seeds))


def select_lines(reports: list[AugmentReport], pairs: list[tuple[Path, Path]]) -> list[str]:
    splits = ", ".join(sorted({report.select_split for report in reports}))
    lines = [f"Select split {splits} (recorded predictions of the stored weights):", "",
             "| model | baseline | augmented | change | McNemar p | baseline seed 2 | seed gap |",
             "|---|---|---|---|---|---|---|"]
    for report, (base, augmented) in zip(reports, pairs):
        dev, noise = report.select.comparison, seed_noise(base)
        lines.append(f"| {augmented.name}{flag(report.select)} | {pct(dev.before)} | {pct(dev.after)} | "
                     f"{100 * dev.change:+.2f} | "
                     f"{p_text(dev.p)} | " + (f"{pct(noise.seed2_accuracy)} | {100 * noise.gap:.2f} |" if noise
                                             else "— | — |"))
    return lines


def probe_lines(report: AugmentReport, base: Path, augmented: Path) -> list[str]:
    rows = report.probes
    lines = ["", f"Probe suite, {augmented.name} against {base.name}: failure rate % per generator and "
                 "capability (cases of its tests pooled), McNemar on the cases only one of them fails, Holm over "
                 f"the {len(rows)} rows; control seeds: the failure rates of the control's seeds on the same cases, "
                 "lowest–highest (a significant loss that leaves the augmented run within them is no regression). "
                 "Engine tests are "
                 "built by the same edit engine and lexicons as the augmentation, so they test a model on its own "
                 "generator: only independent tests and held-out files speak for a fix.", "",
             "| generator | capability | tests | cases | before | after | only before fails | only after fails "
             "| p (Holm) | control seeds |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        c = row.comparison
        lines.append(f"| {row.generator} | {row.name}{flag(row)} | {row.tests} | {c.pairs} | "
                     f"{pct(1 - c.before)} | {pct(1 - c.after)} | {c.only_after_right} | {c.only_before_right} | "
                     f"{p_text(row.p_holm)} | {spread(row, failures=True)} |")
    for generator in ("independent", "engine"):
        part = [r.comparison for r in rows if r.generator == generator]
        total = sum(c.pairs for c in part)
        if total:
            lines.append(f"| {generator} | all | {sum(r.tests for r in rows if r.generator == generator)} | {total} | "
                         f"{pct(sum(c.pairs - c.right_before for c in part) / total)} | "
                         f"{pct(sum(c.pairs - c.right_after for c in part) / total)} | "
                         f"{sum(c.only_after_right for c in part)} | {sum(c.only_before_right for c in part)} | | |")
    lines += swap_lines(report)
    worse = [row for row in rows if row.generator == "independent" and row.worse and row.answers]
    if worse:
        lines += ["", "What the failures answered on the independent capabilities that got worse (expected → said: "
                      "cases, control / augmented):", "", "| capability | control | augmented |", "|---|---|---|"]
        lines += [f"| {row.name} | {answers_text(row.answers[0])} | {answers_text(row.answers[1])} |" for row in worse]
    return lines


def swap_lines(report: AugmentReport) -> list[str]:
    """Does a checkpoint tell the contradicting swaps from the others (`analysis.swap_discrimination`)?"""
    if not report.swaps:
        return []
    lines = ["", "Which one-word swaps contradict (independent tests, no negation): contradiction answered % on "
                 "exclusive-word swaps (hits) and on hypernym and synonym swaps (false alarms), and their difference "
                 "(discrimination, 95% Newcombe): a bias towards contradiction moves both rates; only telling the "
                 "swaps apart moves the difference.", "",
             "| checkpoint | hits | false alarms | discrimination |", "|---|---|---|---|"]
    for role, name, found in report.labelled_swaps():
        low, high = found.interval
        lines.append(f"| {Path(name).name} ({role}) | {pct(found.hit_rate)} | "
                     f"{pct(found.false_alarm_rate)} | {100 * found.discrimination:+.1f} "
                     f"[{100 * low:+.1f}, {100 * high:+.1f}] |")
    return lines


def held_out_lines(report: AugmentReport, base: Path, augmented: Path) -> list[str]:
    lines = ["", f"Held-out public sets, {augmented.name} against {base.name}: accuracy % [95% Wilson], "
                 f"McNemar on the same pairs (Holm over the {len(report.files)} sets):", "",
             "| set | pairs | shared with the training split (pairs / premises / hypotheses) | before | after | "
             "only before right | only after right | p (Holm) | control seeds (accuracy, lowest–highest) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for found in report.files:
        row, c, overlap = found.row, found.row.comparison, found.training_overlap
        shared = (f"{overlap['pairs']} / {overlap['premises']} / {overlap['hypotheses']}" if overlap["checked"]
                  else "not checked")
        lines.append(f"| {row.name}{flag(row)} | {c.pairs:,} | {shared} | {pct(c.before)} "
                     f"[{pct(c.interval_before[0])}, {pct(c.interval_before[1])}] | {pct(c.after)} "
                     f"[{pct(c.interval_after[0])}, {pct(c.interval_after[1])}] | "
                     f"{c.only_before_right} | {c.only_after_right} | {p_text(row.p_holm)} | {spread(row)} |")
    for found in (f for f in report.files if f.categories):
        lines += ["", f"{found.file.name} by category, {augmented.name} against {base.name} (accuracy %; a pair "
                      "counts in each of its categories; McNemar per category, Holm over the categories):", "",
                  "| category | pairs | before | after | only before right | only after right | p (Holm) | "
                  "control seeds (accuracy, lowest–highest) |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {row.name}{flag(row)} | {row.comparison.pairs:,} | {pct(row.comparison.before)} | "
                  f"{pct(row.comparison.after)} | {row.comparison.only_before_right} | "
                  f"{row.comparison.only_after_right} | {p_text(row.p_holm)} | {spread(row)} |"
                  for row in found.categories]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", nargs=2, action="append", required=True, metavar=("BASE", "AUGMENTED"),
                        help="a baseline checkpoint folder and its augmented run (repeat for more models)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"),
                        help="data root (default: ../shared/data)")
    parser.add_argument("--probes-only", action="store_true",
                        help="SNLI dev and the probe suite (how augmentation settings are chosen), no held-out set of the "
                             "data folder (a --file still counts)")
    parser.add_argument("--file", action="append", default=[], metavar="PATH",
                        help="another challenge file to judge on (repeat for more), by its categories when it has "
                             "tags, heuristic, subcase or file values")
    parser.add_argument("--max-cases", type=int, default=DEFAULT_CASES_PER_TEST, metavar="N",
                        help=f"at most N cases per probe test (default {DEFAULT_CASES_PER_TEST}, the suite's); "
                             f"{EVERY_TEMPLATE_CASE} takes every case the template tests have (680 upward, 920 "
                             "downward …), the power to see a regression a 110-case test misses")
    parser.add_argument("--json", default=None, help="also write every number to this JSON file")
    args = parser.parse_args()
    if args.max_cases < 1:
        parser.error("--max-cases takes a positive number of cases")
    pairs = [(Path(a), Path(b)) for a, b in args.pair]
    data = Path(args.data_dir)
    held_out = [] if args.probes_only else [HeldOutFile(name, tuple(data / f for f in files), group)
                                            for name, files, group in HELD_OUT]
    held_out += [] if args.probes_only else taxinli_held_out(data, pairs)
    for path in map(Path, args.file):
        if not path.is_file():
            raise SystemExit(f"--file {path}: no such file")
        held_out.append(held_out_file([path], field_values(read_challenge_files([path]))))
    sources = CommandSources(pairs, args.data_dir, probes=True, max_cases=args.max_cases)
    reports = [build_report(str(base), str(augmented), sources.for_pair(base, augmented), held_out,
                            select_split=select_split(base)) for base, augmented in pairs]
    missing = [f"{report.after}: {what}" for report in reports for what in report.missing]
    if missing:
        raise SystemExit("cannot compare: " + "; ".join(missing))
    lines = select_lines(reports, pairs)
    for report, (base, augmented) in zip(reports, pairs):
        lines += probe_lines(report, base, augmented)
    if held_out:
        for report, (base, augmented) in zip(reports, pairs):
            lines += held_out_lines(report, base, augmented)
    lines += ["", "Commands:", *(f"    {c}" for c in sources.commands)]
    print("\n".join(lines))
    if args.json:
        noise = [seed_noise(base) for base, _ in pairs]
        record = {"pairs": [{**report.record(), "seed_noise": asdict(found) if found else None}
                            for report, found in zip(reports, noise)], "commands": sources.commands}
        Path(args.json).write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
