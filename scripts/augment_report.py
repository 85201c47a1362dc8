"""Before → after tables of targeted augmentation (README "Targeted augmentation"), from nlivis's own commands.

    python scripts/augment_report.py --pair checkpoints/esan-snli-small checkpoints/esan-snli-small-augmented \
        [--pair BASE AUGMENTED …] [--data-dir ../shared/data] [--probes-only] [--json FILE]

For each (baseline, augmented) pair of checkpoints of one model and protocol:
- SNLI dev (the select split both recorded, `predictions_snli_dev.jsonl.gz`): accuracy before → after, the
  change, McNemar's exact test on the same pairs, and the baseline's seed noise — the gap between the baseline
  and its `-seed2` checkpoint when one sits beside it;
- the NLI probe suite (`python -m nlivis probe … --suite nli --data-dir D --json`, every checkpoint in one run),
  its engine-built and independent tests apart (only the independent ones and held-out files speak for a fix):
  failure rate per capability before → after, McNemar on the pooled cases of the capability's tests,
  Holm-adjusted over the capabilities (`nlivis.analysis.probes.capability_comparisons`);
- unless --probes-only, the held-out public sets through `python -m nlivis evaluate CK --file F --data-dir D
  --json`: ANLI dev R1–R3 (with its categories, `--group-by tags`), ConjNLI dev, MultiNLI dev hard matched and
  mismatched — accuracy before → after with McNemar on the kept predictions (Holm over the sets of a model),
  and how many pairs, premises and hypotheses each set shares with the training split.
Judge a fix against its compute-matched control (`--pair checkpoints/esan-snli-small-matched
checkpoints/esan-snli-small-augmented`: the same steps on the original pairs), never against a shorter
baseline alone. Every table lists its significant regressions first (after worse than before, Holm-adjusted
p < 0.05, marked **regression**), then the other rows getting worse, then the rest; each held-out set's
categories are tested too (McNemar per category, Holm over the categories of the set).
Every command it runs is printed to stderr and listed in the output; it changes nothing but the checkpoints'
ignored `evaluations/` folders.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.probes import capability_comparisons  # noqa: E402
from nlivis.data.challenge import read_challenge_files  # noqa: E402
from nlivis.analysis.significance import discordant_counts, holm_adjusted, mcnemar_exact, wilson_interval  # noqa: E402
from nlivis.store.predictions import read_predictions  # noqa: E402

HELD_OUT = (  # (name, files under the data root, group-by field)
    ("ANLI dev R1–R3", ("anli_annotated/ANLI_analysis_r1_dev.csv", "anli_annotated/ANLI_analysis_r2_dev.csv",
                        "anli_annotated/ANLI_analysis_r3_dev.csv"), "tags"),
    ("ConjNLI dev", ("conjnli/conj_dev.tsv",), None),
    ("MultiNLI dev hard matched", ("mnli_hard/matched/s1.test",), None),
    ("MultiNLI dev hard mismatched", ("mnli_hard/mismatched/s1.test",), None),
)
SELECT_PREDICTIONS = "predictions_snli_dev.jsonl.gz"
SIGNIFICANT = 0.05


def regressions_first(rows: list[dict], worse, p_key: str = "p_holm") -> list[dict]:
    """Rows in report order: significant regressions (`worse(row)` and p < 0.05), other rows getting worse,
    then the rest — each group in its original order — with `regression` set on the first group."""
    for row in rows:
        row["regression"] = bool(worse(row) and row[p_key] < SIGNIFICANT)
    return sorted(rows, key=lambda row: (not row["regression"], not worse(row)))


def flag(row: dict) -> str:
    return " **regression**" if row.get("regression") else ""


def category_comparisons(files: list[Path], group: str, before: Path, after: Path) -> list[dict]:
    """Per category of the files' `group` field: pairs, accuracies before → after, McNemar's exact test on the
    pairs of that category, Holm over the categories."""
    groups = read_challenge_files(files).groups(group)
    outcome = (outcomes(before), outcomes(after))
    members: dict[str, list[str]] = {}
    for pair_id, values in groups.items():
        for value in values or ():
            members.setdefault(value, []).append(pair_id)
    rows = []
    for value, ids in sorted(members.items(), key=lambda item: -len(item[1])):
        compared = paired(*({i: found[i] for i in ids if i in found} for found in outcome))
        rows.append({"category": value, **compared})
    for row, adjusted in zip(rows, holm_adjusted([r["p"] for r in rows])):
        row["p_holm"] = adjusted
    return regressions_first(rows, lambda row: row["after"] < row["before"])


def run_json(command: list[str]) -> dict:
    """A `python -m nlivis … --json` command's output; its stderr passes through."""
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}")
    return json.loads(done.stdout)


def outcomes(path: Path) -> dict[str, tuple[str | None, str]]:
    """id → (gold, predicted) of a predictions file."""
    return {p.id: (p.gold, p.predicted) for p in read_predictions(path)}


def paired(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]) -> dict:
    """Accuracies and McNemar's exact test of two prediction sets on the ids both hold (labelled ones)."""
    ids = [i for i in before if i in after and before[i][0] is not None]
    correct_a = [before[i][0] == before[i][1] for i in ids]
    correct_b = [after[i][0] == after[i][1] for i in ids]
    only_a, only_b = discordant_counts(correct_a, correct_b)
    return {"pairs": len(ids), "before": sum(correct_a) / len(ids), "after": sum(correct_b) / len(ids),
            "only_before_right": only_a, "only_after_right": only_b, "p": mcnemar_exact(only_a, only_b),
            "interval_before": wilson_interval(sum(correct_a), len(ids)),
            "interval_after": wilson_interval(sum(correct_b), len(ids))}


def seed_noise(base: Path) -> dict | None:
    """The baseline's recorded select accuracy against its `-seed2` sibling's, when there is one."""
    sibling = base.with_name(base.name + "-seed2")
    if not (sibling / "metrics.json").is_file():
        return None
    accuracy = {p.name: json.loads((p / "metrics.json").read_text())["best_dev_accuracy"] for p in (base, sibling)}
    return {"seed2": sibling.name, "seed2_accuracy": accuracy[sibling.name],
            "gap": abs(accuracy[base.name] - accuracy[sibling.name])}


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def p_text(value: float) -> str:
    return "1" if value >= 0.9995 else (f"{value:.3f}" if value >= 0.001 else f"{value:.1e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", nargs=2, action="append", required=True, metavar=("BASE", "AUGMENTED"),
                        help="a baseline checkpoint folder and its augmented run (repeat for more models)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"),
                        help="data root (default: ../shared/data)")
    parser.add_argument("--probes-only", action="store_true",
                        help="SNLI dev and the probe suite only (how augmentation settings are chosen), no held-out set")
    parser.add_argument("--json", default=None, help="also write every number to this JSON file")
    args = parser.parse_args()
    pairs = [(Path(a), Path(b)) for a, b in args.pair]
    python = sys.executable
    out: dict = {"pairs": [], "commands": []}
    lines: list[str] = []

    lines += ["SNLI dev (select split; recorded predictions of the stored weights):", "",
              "| model | baseline | augmented | change | McNemar p | baseline seed 2 | seed gap |",
              "|---|---|---|---|---|---|---|"]
    for base, augmented in pairs:
        dev = paired(outcomes(base / SELECT_PREDICTIONS), outcomes(augmented / SELECT_PREDICTIONS))
        noise = seed_noise(base)
        out["pairs"].append({"base": str(base), "augmented": str(augmented), "snli_dev": dev, "seed_noise": noise})
        lines.append(f"| {augmented.name} | {pct(dev['before'])} | {pct(dev['after'])} | "
                     f"{100 * (dev['after'] - dev['before']):+.2f} | {p_text(dev['p'])} | "
                     + (f"{pct(noise['seed2_accuracy'])} | {100 * noise['gap']:.2f} |" if noise else "— | — |"))

    probe_command = [python, "-m", "nlivis", "probe", *(str(p) for pair in pairs for p in pair), "--suite", "nli",
                     "--data-dir", args.data_dir, "--json"]
    out["commands"].append(" ".join(["python", *probe_command[1:]]))
    record = run_json(probe_command)
    names = list(record["checkpoints"])
    for (base, augmented), entry in zip(pairs, out["pairs"]):
        a, b = (names[[str(p) for pair in pairs for p in pair].index(str(path))] for path in (base, augmented))
        rows = regressions_first(capability_comparisons(record, a, b), lambda row: row["rate_b"] > row["rate_a"])
        entry["probes"] = rows
        entry["probe_overlap"] = {name: record["checkpoints"][name]["training_overlap"] for name in (a, b)}
        lines += ["", f"Probe suite, {augmented.name} against {base.name}: failure rate % per generator and "
                      "capability (cases of its tests pooled), McNemar on the cases only one of them fails, Holm over "
                      f"the {len(rows)} rows. Engine tests are built by the same edit engine and lexicons as the "
                      "augmentation, so they test a model on its own generator: only independent tests and held-out "
                      "files speak for a fix.", "",
                  "| generator | capability | tests | cases | before | after | only before fails | only after fails "
                  "| p (Holm) |", "|---|---|---|---|---|---|---|---|---|"]
        for row in rows:
            lines.append(f"| {row['generator']} | {row['capability']}{flag(row)} | {row['tests']} | {row['cases']} | "
                         f"{pct(row['rate_a'])} | {pct(row['rate_b'])} | {row['only_a_fails']} | "
                         f"{row['only_b_fails']} | {p_text(row['p_holm'])} |")
        for generator in ("independent", "engine"):
            part = [r for r in rows if r["generator"] == generator]
            total = sum(r["cases"] for r in part)
            if total:
                lines.append(f"| {generator} | all | {sum(r['tests'] for r in part)} | {total} | "
                             f"{pct(sum(r['failures_a'] for r in part) / total)} | "
                             f"{pct(sum(r['failures_b'] for r in part) / total)} | "
                             f"{sum(r['only_a_fails'] for r in part)} | {sum(r['only_b_fails'] for r in part)} | |")

    if not args.probes_only:
        data = Path(args.data_dir)
        for (base, augmented), entry in zip(pairs, out["pairs"]):
            sets, categories = [], {}
            for name, files, group in HELD_OUT:
                results = []
                for checkpoint in (base, augmented):
                    command = [python, "-m", "nlivis", "evaluate", str(checkpoint),
                               *(x for f in files for x in ("--file", str(data / f))),
                               *(["--group-by", group] if group else []), "--data-dir", args.data_dir, "--json"]
                    out["commands"].append(" ".join(["python", *command[1:]]))
                    results.append(run_json(command))
                comparison = paired(outcomes(Path(results[0]["predictions_file"])),
                                    outcomes(Path(results[1]["predictions_file"])))
                sets.append({"set": name, **comparison, "training_overlap": results[0]["training_overlap"],
                             "truncated": results[0]["truncated"]})
                if group:
                    categories[name] = category_comparisons([data / f for f in files], group,
                                                            Path(results[0]["predictions_file"]),
                                                            Path(results[1]["predictions_file"]))
            for row, adjusted in zip(sets, holm_adjusted([s["p"] for s in sets])):
                row["p_holm"] = adjusted
            sets = regressions_first(sets, lambda row: row["after"] < row["before"])
            entry["held_out"], entry["categories"] = sets, categories
            lines += ["", f"Held-out public sets, {augmented.name} against {base.name}: accuracy % [95% Wilson], "
                          f"McNemar on the same pairs (Holm over the {len(sets)} sets):", "",
                      "| set | pairs | shared with the training split (pairs / premises / hypotheses) | before | after | "
                      "only before right | only after right | p (Holm) |", "|---|---|---|---|---|---|---|---|"]
            for row in sets:
                overlap = row["training_overlap"]
                shared = (f"{overlap['pairs']} / {overlap['premises']} / {overlap['hypotheses']}" if overlap["checked"]
                          else "not checked")
                lines.append(f"| {row['set']}{flag(row)} | {row['pairs']:,} | {shared} | {pct(row['before'])} "
                             f"[{pct(row['interval_before'][0])}, {pct(row['interval_before'][1])}] | {pct(row['after'])} "
                             f"[{pct(row['interval_after'][0])}, {pct(row['interval_after'][1])}] | "
                             f"{row['only_before_right']} | {row['only_after_right']} | {p_text(row['p_holm'])} |")
            for name, rows in categories.items():
                lines += ["", f"{name} by category, {augmented.name} against {base.name} (accuracy %; a pair counts in "
                              "each of its categories; McNemar per category, Holm over the categories):", "",
                          "| category | pairs | before | after | only before right | only after right | p (Holm) |",
                          "|---|---|---|---|---|---|---|"]
                lines += [f"| {row['category']}{flag(row)} | {row['pairs']:,} | {pct(row['before'])} | "
                          f"{pct(row['after'])} | {row['only_before_right']} | {row['only_after_right']} | "
                          f"{p_text(row['p_holm'])} |" for row in rows]

    lines += ["", "Commands:", *(f"    {c}" for c in out["commands"])]
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
