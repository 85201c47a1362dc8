"""Evaluate a checkpoint on a protocol's split or on challenge files; nothing recorded is overwritten.

    python -m nlivis evaluate checkpoints/gcnn-snli-small --dataset snli-small --split dev --data-dir ../shared/data
    python -m nlivis evaluate checkpoints/esan-mnli-small --dataset mnli --split dev_matched \
        --data-dir ../shared/data/mnli_dev --by-tag
    python -m nlivis evaluate checkpoints/esan-snli-small --file ../shared/data/conjnli/conj_dev.tsv \
        --data-dir ../shared/data
    python -m nlivis evaluate checkpoints/esan-snli-small --file counterfactually-augmented-data/NLI --split test \
        --group-by file --data-dir ../shared/data

A file's evaluation says how many of its pairs, premises and hypotheses occur in the checkpoint's training
split (read from --data-dir; "not checked" without it) and, for contrast sets, the contrast consistency.
Predictions are kept as a named evaluation (<checkpoint>/evaluations/NAME/) unless they equal what the
checkpoint recorded for that split. Every input (checkpoint, split file, labels, tags file) is checked
before any spaCy work.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from nlivis.cli.common import fail
from nlivis.data.challenge import COMPRESSED_SUFFIX, FORMATS


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


def run(args) -> int:
    """A protocol's split. With --by-tag, pairs with gold tags (--tags-file, or the split's published
    annotation file found under DIR) are scored with them and the other pairs with the automatic tags, in
    rows whose `source` says which (--tag-source gold / automatic keeps one kind)."""
    from nlivis.analysis import evaluation
    from nlivis.analysis.breakdown import accuracy_by_tag_and_source, taxonomy_report
    from nlivis.analysis.tags import TagFileError
    from nlivis.data.records import DataFormatError
    from nlivis.data.taxonomies import is_taxinli_file, join_to_pairs, read_taxinli
    from nlivis.store.predictions import Prediction
    from nlivis.data.protocols import resolve_split, split_key
    from nlivis.features.dataset import source_files
    from nlivis.inference import load_checkpoint
    from nlivis.store.evaluations import data_identity, store_evaluation

    if args.file:
        from nlivis.data.challenge import is_counterfactual_folder

        for path in map(Path, args.file):
            if path.is_dir() and not is_counterfactual_folder(path):
                return fail(f"--file {path}: is a folder; give the file itself (or a folder in counterfactually-"
                            "augmented NLI's layout, holding original/, revised_premise/, revised_hypothesis/)",
                            args.json)
        if args.split and not any(is_counterfactual_folder(Path(path)) for path in args.file):
            return fail("--split with --file picks the split of a counterfactually-augmented folder; none was "
                        "given (give either --file or --dataset/--split/--data-dir)", args.json)
        return run_on_files(args, load_checkpoint(args.checkpoint))
    if not (args.dataset and args.split and args.data_dir):
        return fail("give --dataset, --split and --data-dir (a protocol's split), or --file PATH", args.json)
    if args.group_by or args.contrast_group:
        return fail(f"{'--group-by' if args.group_by else '--contrast-group'} needs --file (a protocol's split is "
                    "broken down with --by-tag)", args.json)
    ref = resolve_split(args.dataset, args.split)
    gold, gold_file = {}, None
    tag_source = args.tag_source
    taxonomy = None  # a TaxiNLI file given as --tags-file: its categories, genres and reference models
    if args.by_tag and args.tags_file and is_taxinli_file(args.tags_file):
        try:
            taxonomy = read_taxinli(args.tags_file)
        except DataFormatError as error:
            return fail(str(error), args.json)
    if args.by_tag and tag_source != "automatic" and taxonomy is None:
        try:
            gold, gold_file = evaluation.gold_tags_for(ref, args.data_dir, args.tags_file)
        except TagFileError as error:
            return fail(str(error), args.json)
        if tag_source == "gold" and gold_file is None:
            return fail(f"--tag-source gold: {split_key(ref)} has no published gold tags under {args.data_dir}; "
                        "give --tags-file", args.json)
    read = evaluation.read_split_checked(ref, args.data_dir, labels=None)  # milliseconds, before any spaCy work
    if taxonomy is not None and not join_to_pairs(taxonomy.rows, read.pairs):
        # joined again after prediction; this stops a wrong file before any spaCy work
        return fail(f"{args.tags_file}: none of its {len(taxonomy.rows)} TaxiNLI rows is a pair of {split_key(ref)} "
                    "(TaxiNLI covers MultiNLI dev matched and mismatched)", args.json)
    if gold and not {pair.id for pair in read.pairs} & set(gold):
        return fail(f"{gold_file}: none of its {len(gold)} pair ids is a pair of {split_key(ref)}; "
                    "is it the tag file of another split?", args.json)
    loaded = load_checkpoint(args.checkpoint)
    evaluation.check_split_labels(ref, args.data_dir, read, loaded.labels)
    items = evaluation.analyze_split(ref, read, args.cache_dir)
    result = evaluation.evaluate_checkpoint(loaded, items)
    key = split_key(ref)
    truncation = evaluation.count_truncated(loaded.featurizer, items)
    stored = store_evaluation(  # never over the recorded predictions_<split> file
        loaded.path, result.predictions, data_identity(source_files(read)),
        evaluation.evaluation_record(result.report, read, truncation, result.unlabelled),
        split_key=key, name=getattr(args, "name", None))
    predictions_file = stored.predictions_file
    notes = read.notes() + ([truncation.describe()] if truncation.pairs else [])

    by_tag, by_genre, tag_note = None, None, ""
    if taxonomy is not None:
        predictions = [Prediction(r["id"], r["gold"], r["predicted"], tuple(r["probs"])) for r in result.predictions]
        try:
            by_tag, by_genre, tag_note = taxonomy_report(predictions, loaded.path.name, taxonomy, read.pairs)
        except ValueError as error:
            return fail(str(error), args.json)
    elif args.by_tag:

        split_ids = {item.pair.id for item in items}
        gold = {pair_id: names for pair_id, names in gold.items() if pair_id in split_ids}
        automatic, unavailable = evaluation.tags_by_pair([item.pair for item in items], gold, tag_source)
        predictions = [Prediction(r["id"], r["gold"], r["predicted"], tuple(r["probs"])) for r in result.predictions]
        by_tag = accuracy_by_tag_and_source(predictions, gold, automatic, unavailable)
        tag_note = (f"gold tags: {len(gold)} pairs" + (f" from {gold_file}" if gold_file else "")
                    + (f"; automatic tags: {len(automatic)} other pairs" if automatic is not None else ""))

    if args.json:
        output = {"checkpoint": str(loaded.path), "split": key, **result.report.to_dict(),
                  "unlabelled": result.unlabelled, "dropped_no_gold": read.dropped_no_gold,
                  "truncated": truncation.to_dict(), "notes": notes, "predictions_file": str(predictions_file),
                  "written": stored.written, "name": stored.name, "message": stored.message}
        if by_tag is not None:
            output["by_tag"] = json.loads(by_tag.to_json(orient="records"))
            output["tag_sources"] = tag_note
        if by_genre is not None:
            output["by_genre"] = json.loads(by_genre.to_json(orient="records"))
        print(json.dumps(output, indent=1))
        return 0
    print(f"checkpoint {loaded.path} on {key}")
    print(result.report.format_table())
    if result.unlabelled:
        print(f"\n{result.unlabelled} pairs without a gold label were predicted but not scored")
    for note in notes:
        print(f"\nnote: {note}")
    if by_tag is not None:
        print(f"\naccuracy by tag ({tag_note}; source says which):")
        print(by_tag.round(3).to_string(index=False))
    if by_genre is not None:
        print("\naccuracy by genre (TaxiNLI's genres):")
        print(by_genre.round(3).to_string(index=False))
    print(f"\n{stored.message}")
    return 0


def run_on_files(args: argparse.Namespace, loaded: Any) -> int:
    """Challenge files, optionally broken down by a field (--group-by), with contrast consistency where pairs
    form contrast groups and the overlap with the checkpoint's training split."""
    from nlivis.analysis.evaluation import accuracy_interval, contrast_field_of, evaluate_file, read_challenge_checked
    from nlivis.data.text import shown

    if args.dataset:
        raise ValueError("give either --file or --dataset/--split/--data-dir, not both")
    if args.by_tag or args.tags_file:
        raise ValueError("--by-tag/--tags-file work on a protocol's split; with --file use --group-by FIELD")
    challenge = read_challenge_checked(args.file, loaded.labels, args.split)
    if args.group_by:
        challenge.groups(args.group_by)  # an unknown field fails here, before spaCy
    contrast_field = contrast_field_of(challenge, args.contrast_group)
    if contrast_field:
        challenge.groups(contrast_field)
    evaluation, table = evaluate_file(loaded, challenge.files, group_by=args.group_by, name=args.name,
                                      cache_dir=args.cache_dir, challenge=challenge,
                                      contrast_group=args.contrast_group, data_dir=args.data_dir)
    stored = evaluation.stored
    contrast = None
    if evaluation.contrast is not None:
        records = json.loads(evaluation.contrast.to_json(orient="records"))
        contrast = {"field": contrast_field, "overall": {k: v for k, v in records[-1].items() if k != "group"}}
        if args.group_by:
            contrast["by_group"] = records[:-1]
    if args.json:
        output = {"checkpoint": str(loaded.path), "files": [str(p) for p in evaluation.challenge.files],
                  "data": evaluation.identity.to_dict(), **evaluation.report.to_dict(),
                  "accuracy_interval": [None if math.isnan(v) else v for v in accuracy_interval(evaluation.report)],
                  "labels": list(evaluation.scored.labels), "label_mapping": evaluation.scored.mapping_note or None,
                  "unlabelled": sum(row["gold"] is None for row in evaluation.scored.rows),
                  "dropped_no_gold": evaluation.challenge.result.dropped_no_gold,
                  "truncated": evaluation.truncation.to_dict(), "training_overlap": evaluation.overlap.to_dict(),
                  "contrast_consistency": contrast, "notes": evaluation.notes(),
                  "name": stored.name, "predictions_file": str(stored.predictions_file), "written": stored.written,
                  "message": stored.message}
        if table is not None:
            from nlivis.analysis.challenge import OVERALL_GROUP

            records = json.loads(table.to_json(orient="records"))
            output["group_by"] = args.group_by
            output["by_group"] = [r for r in records if r["group"] != OVERALL_GROUP]
            output["overall"] = next((r for r in records if r["group"] == OVERALL_GROUP), None)
        print(json.dumps(output, indent=1))
        return 0
    print(f"checkpoint {loaded.path} on {', '.join(map(str, evaluation.challenge.files))}")
    print(evaluation.report.format_table())
    print(f"\n{headline(evaluation)}")
    if contrast is not None:
        print(contrast_line(contrast["overall"], contrast_field))
    print(evaluation.overlap.describe())
    for note in evaluation.notes():
        print(f"\nnote: {shown(note)}")
    if table is not None:
        print(f"\naccuracy by {args.group_by} (95% Wilson intervals; a pair counts in each of its values):")
        print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if contrast is not None and args.group_by:
        print(f"\ncontrast consistency by {args.group_by} (each group cut to its members of that value; 95% Wilson "
              "intervals):")
        print(evaluation.contrast.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\n{stored.message}")
    return 0


def headline(evaluation: Any) -> str:
    """Accuracy with its Wilson interval, on one line."""
    from nlivis.analysis.evaluation import accuracy_interval

    report = evaluation.report
    low, high = accuracy_interval(report)
    return f"accuracy {100 * report.accuracy:.1f}% [{100 * low:.1f}, {100 * high:.1f}] on {report.count:,} pairs"


def contrast_line(overall: dict[str, Any], field_name: str) -> str:
    """Contrast consistency with its interval and the accuracy on the same pairs, on one line."""
    if not overall["contrast_groups"]:
        return (f"contrast consistency: no contrast groups ({field_name} gives every labelled pair a group of its "
                f"own: {overall['single_member_groups']:,} groups of one member)")
    return (f"contrast consistency {100 * overall['consistency']:.1f}% [{100 * overall['ci_low']:.1f}, "
            f"{100 * overall['ci_high']:.1f}]: right on every member of {overall['consistent']:,} of "
            f"{overall['contrast_groups']:,} groups ({field_name}; accuracy on their {overall['members']:,} pairs "
            f"{100 * overall['member_accuracy']:.1f}%)")
