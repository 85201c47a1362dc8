"""Which surface cues decide a checkpoint's answers: per cue (words changed between premise and hypothesis, the
side holding a negation) and value, the pairs, how often gold says contradiction and how often each checkpoint
does (and its accuracy there), on the splits the checkpoints recorded and on challenge files.

    python -m nlivis cues checkpoints/esan-snli-small checkpoints/esan-snli-small-augmented \
        --data-dir ../shared/data --file ../shared/data/conjnli/conj_dev.tsv [--json]

The splits the checkpoints (of one protocol) recorded predictions on come from those predictions, no model runs:
SNLI dev for snli-small; XNLI-en dev, MultiNLI dev matched / mismatched and their hard subsets for mnli-small.
A file's predictions come from its named
evaluation, made and kept as `evaluate --file` does when missing. A checkpoint that learned "one changed word →
contradiction" says contradiction far more often than gold in the 1-word row.
"""
from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoints", nargs="+", help="checkpoint folders of one protocol (the splits they "
                        "recorded predictions on, e.g. SNLI dev or XNLI-en dev, are broken down with no model runs)")
    parser.add_argument("--data-dir", required=True, help="data root holding the recorded splits (snli/esnli_tokenized/, "
                        "xnli_en/, mnli_dev/, mnli_hard/; e.g. ../shared/data)")
    parser.add_argument("--file", action="append", default=[], help="a challenge file (any format `evaluate --file` "
                        "reads) to break down too; repeat for more (default: the recorded splits only)")
    parser.add_argument("--cache-dir", default=None, help="cache folder for spaCy analyses (default: $NLIVIS_CACHE_DIR "
                        "or ~/.cache/nlivis)")
    parser.add_argument("--json", action="store_true", help="print JSON ({checkpoints, label, cues, sets: {set: {cue: "
                        "[{value, pairs, gold, models: {name: {predicted, accuracy}}}]}}}) instead of tables")


def format_cue_tables(record: dict) -> str:
    """One markdown table per evidence set and cue: value, pairs, gold %, then each checkpoint's predicted % and
    accuracy."""
    names = record["checkpoints"]
    lines = []
    for name, cues in record["sets"].items():
        for cue, rows in cues.items():
            lines += [f"**{name}: {cue}** (% {record['label']}: gold, then each checkpoint's predictions; accuracy %)",
                      "", "| value | pairs | gold | " + " | ".join(f"{n} says / right" for n in names) + " |",
                      "|" + "---|" * (3 + len(names))]
            lines += ["| " + " | ".join([row["value"], f"{row['pairs']:,}", f"{row['gold']:.1f}",
                                         *(f"{row['models'][n]['predicted']:.1f} / {row['models'][n]['accuracy']:.1f}"
                                           for n in names)]) + " |" for row in rows]
            lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from nlivis.workflows.cues import cue_report  # loads torch and pandas: not for `--help`

    record = cue_report(args.checkpoints, args.data_dir, args.file, args.cache_dir).record()
    print(json.dumps(record, indent=1) if args.json else format_cue_tables(record))
    return 0
