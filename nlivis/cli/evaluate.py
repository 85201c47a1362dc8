"""Evaluate a checkpoint on a protocol's split or on challenge files; nothing recorded is overwritten.

    python -m nlivis evaluate checkpoints/gcnn-snli-small --dataset snli-small --split dev --data-dir ../shared/data
    python -m nlivis evaluate checkpoints/esan-mnli-small --dataset mnli --split dev_matched \
        --data-dir ../shared/data/mnli_dev --by-tag
    python -m nlivis evaluate checkpoints/esan-snli-small --file ../shared/data/conjnli/conj_dev.tsv \
        --data-dir ../shared/data
    python -m nlivis evaluate checkpoints/esan-snli-small --file counterfactually-augmented-data/NLI --split test \
        --group-by file --data-dir ../shared/data
    python -m nlivis evaluate checkpoints/esan-mnli-small --file ../shared/data/taxinli/taxinli10k_MNLIDev.tsv \
        --columns premise=prem,hypothesis=hyp --label-scheme 2way --group-by genre

A file's evaluation says how many of its pairs, premises and hypotheses occur in the checkpoint's training
split (read from --data-dir; "not checked" without it) and, for contrast sets, the contrast consistency.
Predictions are kept as a named evaluation (<checkpoint>/evaluations/NAME/) unless they equal what the
checkpoint recorded for that split. Every input (checkpoint, split file, labels, tags file) is checked
before any spaCy work.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nlivis.cli.common import fail
from nlivis.data.challenge import (COLUMN_KEYS, COMPRESSED_SUFFIX, DEFAULT_LABEL_SCHEME, FORMATS, LABEL_SCHEMES,
                                   is_counterfactual_folder, parse_columns)
from nlivis.data.records import InputError
from nlivis.data.protocols import resolve_split
from nlivis.data.text import shown


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="checkpoint folder")
    parser.add_argument("--dataset", default=None,
                        help="dataset or protocol of the split to evaluate (default: none; give it, or --file)")
    parser.add_argument("--split", default=None,
                        help="split name or key, e.g. dev, dev_matched, snli_dev; with --file FOLDER in "
                             "counterfactually-augmented NLI's layout, the split to read, e.g. test (default: none; "
                             "for such a folder, the only split it holds)")
    parser.add_argument("--data-dir", default=None,
                        help="folder holding the split's files; with --file, the data root holding the checkpoint's "
                             "recorded training split (e.g. ../shared/data for the -small protocols), to count the "
                             "file's pairs and sentences found there (default: none — the overlap is reported as "
                             "not checked)")
    parser.add_argument("--file", action="append", default=None,
                        help=f"evaluate this file instead (formats: {', '.join(FORMATS)}, any also {COMPRESSED_SUFFIX}; "
                             "e.g. ANLI's annotated CSV, ConjNLI, "
                             "HANS, a paraphrase file with 0 / 1 labels), or a folder in counterfactually-augmented "
                             "NLI's layout (original/, revised_premise/, revised_hypothesis/); repeat for one file "
                             "per category (default: none)")
    parser.add_argument("--columns", default=None, type=columns_option,
                        help="with --file: name the columns of a header TSV / CSV / JSON lines file whose names are not "
                             f"the usual ones, as KEY=NAME,… with keys {', '.join(COLUMN_KEYS)} (e.g. premise=Text,"
                             "hypothesis=Hypothesis,label=gold_label); keys left out are found by name; every other "
                             "column can be grouped by (default: none — found by name)")
    parser.add_argument("--label-scheme", default=DEFAULT_LABEL_SCHEME, choices=LABEL_SCHEMES,
                        help="with --file: 3way scores in the labels the file uses (a file labelled entailment / "
                             "non-entailment, as HANS, is 2-way already); 2way scores entailment vs non-entailment: "
                             "neutral and contradiction merge into non-entailment in the gold labels and in a 3-way "
                             "model's answers, for sets written 2-way (default: %(default)s)")
    parser.add_argument("--group-by", default=None,
                        help="with --file: accuracy per value of this field, e.g. tags, heuristic, file (default: none)")
    parser.add_argument("--contrast-group", default=None,
                        help="with --file: the field whose value joins an original to its edits; reports contrast "
                             "consistency, the share of groups the model gets right on every member, with a 95%% "
                             "Wilson interval (default: none; a counterfactually-augmented folder or its files form "
                             "their groups themselves, field contrast_group)")
    parser.add_argument("--name", default=None,
                        help="name of the evaluation folder <checkpoint>/evaluations/NAME (default: the data's name "
                             "and 8 hex digits of its content hash)")
    parser.add_argument("--by-tag", action="store_true", help="add accuracy per annotation tag")
    parser.add_argument("--tags-file", default=None,
                        help="hand-annotated tags (pair id → tags, e.g. the RepEval 2017 release), used for the pairs "
                             "it lists (default: the split's published gold tags when they are in --data-dir). A TaxiNLI file "
                             "(taxinli10k_MNLIDev.tsv) gives accuracy per TaxiNLI category and genre instead, with "
                             "its reference models (ESIM, BERT, bag of words) on the same pairs")
    parser.add_argument("--tag-source", default="both", choices=["both", "gold", "automatic"],
                        help="with --by-tag: both (gold-tagged pairs with their gold tags, the others with automatic "
                             "tags, reported apart), gold only, or automatic only")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--cache-dir", default=None,
                        help="cache folder for spaCy analyses (default: $NLIVIS_CACHE_DIR or ~/.cache/nlivis)")


def run(args: argparse.Namespace) -> int:
    """Check that the arguments name one kind of data (a protocol's split, or files), evaluate it with the
    workflow (`nlivis.workflows.evaluate`), and print its record as JSON or as tables."""
    from nlivis.inference import load_checkpoint
    from nlivis.workflows.evaluate import evaluate_file, evaluate_split

    if args.file:
        problem = files_problem(args)
        if problem:
            return fail(problem, args.json)
        evaluation = evaluate_file(load_checkpoint(args.checkpoint), args.file, split=args.split,
                                   group_by=args.group_by, name=args.name, cache_dir=args.cache_dir,
                                   contrast_group=args.contrast_group, data_dir=args.data_dir,
                                   label_scheme=args.label_scheme, columns=args.columns)
        return print_json(evaluation.record()) if args.json else print_file_evaluation(evaluation)
    if not (args.dataset and args.split and args.data_dir):
        return fail("give --dataset, --split and --data-dir (a protocol's split), or --file PATH", args.json)
    if args.group_by or args.contrast_group:
        return fail(f"{'--group-by' if args.group_by else '--contrast-group'} needs --file (a protocol's split is "
                    "broken down with --by-tag)", args.json)
    if args.columns or args.label_scheme != DEFAULT_LABEL_SCHEME:
        return fail(f"{'--columns' if args.columns else '--label-scheme'} needs --file (a protocol's split is read "
                    "in its own format and labels)", args.json)
    evaluation = evaluate_split(args.checkpoint, resolve_split(args.dataset, args.split), args.data_dir,
                                by_tag=args.by_tag, tags_file=args.tags_file, tag_source=args.tag_source,
                                name=args.name, cache_dir=args.cache_dir)
    return print_json(evaluation.record()) if args.json else print_split_evaluation(evaluation)


def files_problem(args: argparse.Namespace) -> str | None:
    """Why --file cannot be evaluated with the other arguments given (a plain folder, --split without a
    counterfactually-augmented folder, a protocol's options), or None."""
    for path in map(Path, args.file):
        if path.is_dir() and not is_counterfactual_folder(path):
            return (f"--file {path}: is a folder; give the file itself (or a folder in counterfactually-augmented "
                    "NLI's layout, holding original/, revised_premise/, revised_hypothesis/)")
    if args.dataset:
        return (f"--file and --dataset {args.dataset}: give either --file (challenge files) or --dataset/--split/"
                "--data-dir (a protocol's split), not both")
    if args.split and not any(is_counterfactual_folder(Path(path)) for path in args.file):
        return ("--split with --file picks the split of a counterfactually-augmented folder; none was given (give "
                "either --file or --dataset/--split/--data-dir)")
    if args.by_tag or args.tags_file:
        return "--by-tag/--tags-file work on a protocol's split; with --file use --group-by FIELD"
    return None


def columns_option(text: str) -> dict[str, str]:
    """argparse type of --columns: `parse_columns`, its one-line problem reported under the option's name."""
    try:
        return parse_columns(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None


def print_json(record: dict[str, Any]) -> int:
    print(json.dumps(record, indent=1))
    return 0


def print_split_evaluation(evaluation: Any) -> int:
    """A split's evaluation as tables: the report, the notes and the tag tables."""
    result, tables = evaluation.result, evaluation.tables
    print(f"checkpoint {evaluation.checkpoint} on {evaluation.split}")
    print(result.report.format_table())
    if result.unlabelled:
        print(f"\n{result.unlabelled} pairs without a gold label were predicted but not scored")
    for note in evaluation.notes():
        print(f"\nnote: {note}")
    if tables is not None and tables.by_tag is not None:
        print(f"\naccuracy by tag ({tables.note}; source says which):")
        print(tables.by_tag.round(3).to_string(index=False))
    if tables is not None and tables.by_genre is not None:
        print("\naccuracy by genre (TaxiNLI's genres):")
        print(tables.by_genre.round(3).to_string(index=False))
    print(f"\n{evaluation.stored.message}")
    return 0


def print_file_evaluation(evaluation: Any) -> int:
    """A file's evaluation as tables: the report, accuracy with its interval, contrast consistency, the
    overlap with the training split, the notes and the tables by --group-by."""
    contrast = evaluation.contrast_record()
    print(f"checkpoint {evaluation.checkpoint} on {', '.join(map(str, evaluation.challenge.files))}")
    print(evaluation.report.format_table())
    print(f"\n{headline(evaluation)}")
    if contrast is not None:
        print(contrast_line(contrast["overall"], evaluation.contrast_field))
        if contrast["per_original"] is not None:
            print(contrast_line(contrast["per_original"], evaluation.contrast_field, "each original with all its edits"))
    print(evaluation.overlap.describe())
    for note in evaluation.notes():
        print(f"\nnote: {shown(note)}")
    if evaluation.table is not None:
        print(f"\naccuracy by {evaluation.group_by} (95% Wilson intervals; a pair counts in each of its values):")
        print(evaluation.table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if contrast is not None and evaluation.group_by:
        cut = ("each original with its edits of that value; the original row: with all its edits"
               if contrast["per_original"] is not None else "each group cut to its members of that value")
        print(f"\ncontrast consistency by {evaluation.group_by} ({cut}; 95% Wilson intervals):")
        print(evaluation.contrast.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\n{evaluation.stored.message}")
    return 0


def headline(evaluation: Any) -> str:
    """Accuracy with its Wilson interval, on one line."""
    from nlivis.analysis.evaluation import accuracy_interval  # pandas and scipy, through analysis.challenge

    report = evaluation.report
    low, high = accuracy_interval(report)
    return f"accuracy {100 * report.accuracy:.1f}% [{100 * low:.1f}, {100 * high:.1f}] on {report.count:,} pairs"


def contrast_line(overall: dict[str, Any], field_name: str, what: str = "") -> str:
    """Contrast consistency (of `what`, when given) with its interval and the accuracy on the same pairs, on
    one line."""
    name = f"contrast consistency ({what})" if what else "contrast consistency"
    if not overall["contrast_groups"]:
        return (f"{name}: no contrast groups ({field_name} gives every labelled pair a group of its "
                f"own: {overall['single_member_groups']:,} groups of one member)")
    return (f"{name} {100 * overall['consistency']:.1f}% [{100 * overall['ci_low']:.1f}, "
            f"{100 * overall['ci_high']:.1f}]: right on every member of {overall['consistent']:,} of "
            f"{overall['contrast_groups']:,} groups ({field_name}; accuracy on their {overall['members']:,} pairs "
            f"{100 * overall['member_accuracy']:.1f}%)")
