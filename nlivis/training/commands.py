"""The train / evaluate / predict sub-commands, and the Python functions the app calls for the same work.

    python -m nlivis train --config gcnn --dataset snli-small --data-dir ../shared/data --out checkpoints/gcnn-snli-small \
        --size shipped --embeddings minilm
    python -m nlivis evaluate checkpoints/gcnn-snli-small --dataset snli-small --split dev --data-dir ../shared/data
    python -m nlivis predict checkpoints/gcnn-snli-small --premise "A man plays." --hypothesis "A man sleeps."

Every failure a user can cause (bad checkpoint, missing data, empty text) prints one line and exits 2.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch

from nlivis.features.chars import UNK_ID
from nlivis.training.checkpoint import CheckpointError, LoadedCheckpoint, load_checkpoint
from nlivis.training.metrics import ClassificationReport, classification_report

EVALUATION_BATCH_SIZE = 128
"""Pairs per forward pass in `evaluate_checkpoint` (memory, not results, depends on it)."""


def _fail(message: str) -> int:
    from nlivis.data.text import shown

    print(f"error: {shown(message, keep_newlines=True)}", file=sys.stderr)
    return 2


# ----------------------------------------------------------------------------------------------- train

def train_command(args) -> int:
    """`python -m nlivis train ...`: see `nlivis.training.trainer.train` for what each option does."""
    from nlivis.training.config import load_config
    from nlivis.training.distributed import DistributedContext
    from nlivis.training.trainer import TrainingStopped, train

    try:
        config = load_config(args.config)
        info = train(config, args.dataset, args.data_dir, args.out, device=args.device, seed=args.seed,
                     max_steps=args.max_steps, epochs=args.epochs, embeddings=args.embeddings, resume=args.resume,
                     size=args.size, cache_dir=args.cache_dir, model_name=args.model)
    except TrainingStopped as stopped:
        print(str(stopped), file=sys.stderr)
        return 130
    except CheckpointError as error:
        return _fail(str(error))
    if DistributedContext.from_environment().is_main:
        accuracy = "n/a" if info.dev_accuracy is None else f"{info.dev_accuracy:.4f}"
        print(f"checkpoint: {info.path}\nmodel: {info.model} ({info.parameters:,} parameters without word embeddings)\n"
              f"best {info.select_split} accuracy: {accuracy}")
    return 0


# -------------------------------------------------------------------------------------------- evaluate

@dataclass
class EvaluationResult:
    """Scores over the labelled pairs, and one prediction row per pair (labelled or not)."""

    report: ClassificationReport
    predictions: list[dict[str, Any]]
    probabilities: torch.Tensor
    unlabelled: int = 0


def evaluate_checkpoint(loaded: LoadedCheckpoint, pairs_analyzed: Sequence, batch_size: int = EVALUATION_BATCH_SIZE) -> EvaluationResult:
    """Predict every analysed pair with a loaded checkpoint and score the labelled ones."""
    from nlivis.training.evaluation import check_finite
    from nlivis.training.trainer import predict_probabilities, prediction_rows

    if not pairs_analyzed:
        raise ValueError("no pairs to evaluate")
    device = next(loaded.model.parameters()).device
    probabilities = check_finite(predict_probabilities(loaded.model, loaded.featurizer, pairs_analyzed, batch_size, device),
                                 loaded.path)
    rows = prediction_rows(pairs_analyzed, probabilities, loaded.labels)
    index = {label: i for i, label in enumerate(loaded.labels)}
    labelled = [r for r in rows if r["gold"] is not None]
    unknown = sorted({r["gold"] for r in labelled} - set(index))
    if unknown:
        raise ValueError(f"gold labels {unknown} are not among this checkpoint's labels {list(loaded.labels)}")
    report = classification_report([index[r["gold"]] for r in labelled], [index[r["predicted"]] for r in labelled],
                                   loaded.labels)
    return EvaluationResult(report, rows, probabilities, unlabelled=len(rows) - len(labelled))


def resolve_split(dataset: str, split: str):
    """The `SplitRef` for `--dataset D --split S`: a protocol's split by name or key, or a dataset's split."""
    from nlivis.data.protocols import SplitRef, all_protocol_refs, get_protocol, split_key

    protocol = get_protocol(dataset)
    refs = all_protocol_refs(protocol)
    for ref in refs:
        if split in (ref.split, split_key(ref)):
            return ref
    if protocol.small:
        known = sorted({r.split for r in refs} | {split_key(r) for r in refs})
        raise ValueError(f"protocol {dataset!r} has no split {split!r}; its splits: {', '.join(known)}")
    return SplitRef(dataset, split, "")


def gold_tags_for(ref, data_dir: str | None, tags_file: str | None) -> tuple[dict[str, frozenset[str]], str | None]:
    """(gold tags, their file): `tags_file` when given, else the split's published annotation tags found
    under `data_dir` (MultiNLI dev matched/mismatched), else none. Read and checked in milliseconds,
    so a bad file stops the command before any parsing or prediction."""
    from nlivis.analysis.tags import read_tag_file
    from nlivis.data.protocols import gold_tag_file

    path = tags_file or (gold_tag_file(ref, data_dir) if data_dir else None)
    if path is None:
        return {}, None
    return read_tag_file(path), str(path)


def tags_by_pair(pairs: Sequence, gold: dict[str, frozenset[str]], tag_source: str = "both"
                 ) -> tuple[dict[str, frozenset[str]] | None, dict[str, str]]:
    """Automatic tags for the pairs without gold tags (None when `tag_source` is "gold"), and the tags
    the automatic tagger cannot decide here."""
    from nlivis.analysis.tags import tag_pairs, unavailable_tags

    if tag_source == "gold":
        return None, {}
    untagged = [pair for pair in pairs if pair.id not in gold]
    return (tag_pairs(untagged, progress=True) if untagged else {}), unavailable_tags()


def evaluate_command(args) -> int:
    """`python -m nlivis evaluate CHECKPOINT --dataset D --split S --data-dir DIR [--json] [--by-tag] [--name N]`,
    or `... --file PATH [--group-by FIELD]` (see `nlivis.training.evaluation`: nothing recorded is overwritten).

    With --by-tag, pairs with gold tags (--tags-file, or the split's published annotation file found
    under DIR) are scored with them and the other pairs with the automatic tags, in rows whose
    `source` says which (--tag-source gold / automatic keeps one kind). Every input (checkpoint, split
    file, labels, tags file) is checked before any spaCy work."""
    from nlivis.analysis.tags import TagFileError
    from nlivis.data.protocols import split_key
    from nlivis.training import evaluation

    if getattr(args, "file", None):
        try:
            loaded = load_checkpoint(args.checkpoint)
        except CheckpointError as error:
            return _fail(str(error))
        return evaluation.evaluate_file_command(args, loaded)
    if not (args.dataset and args.split and args.data_dir):
        return _fail("give --dataset, --split and --data-dir (a protocol's split), or --file PATH")
    if getattr(args, "group_by", None):
        return _fail("--group-by needs --file (a protocol's split is broken down with --by-tag)")
    ref = resolve_split(args.dataset, args.split)
    gold, gold_file = {}, None
    tag_source = getattr(args, "tag_source", "both")
    taxonomy = None  # a TaxiNLI file given as --tags-file: its categories, genres and reference models
    if args.by_tag and args.tags_file:
        from nlivis.data.records import DataFormatError
        from nlivis.data.taxonomies import is_taxinli_file, read_taxinli

        if is_taxinli_file(args.tags_file):
            try:
                taxonomy = read_taxinli(args.tags_file)
            except DataFormatError as error:
                return _fail(str(error))
    if args.by_tag and tag_source != "automatic" and taxonomy is None:
        try:
            gold, gold_file = gold_tags_for(ref, args.data_dir, args.tags_file)
        except TagFileError as error:
            return _fail(str(error))
        if tag_source == "gold" and gold_file is None:
            return _fail(f"--tag-source gold: {split_key(ref)} has no published gold tags under {args.data_dir}; "
                         "give --tags-file")
    read = evaluation.read_split_checked(ref, args.data_dir, labels=None)  # milliseconds, before any spaCy work
    if taxonomy is not None:  # joined again after prediction; this stops a wrong file before any spaCy work
        from nlivis.data.taxonomies import join_to_pairs

        if not join_to_pairs(taxonomy.rows, read.pairs):
            return _fail(f"{args.tags_file}: none of its {len(taxonomy.rows)} TaxiNLI rows is a pair of {split_key(ref)} "
                         "(TaxiNLI covers MultiNLI dev matched and mismatched)")
    if gold and not {pair.id for pair in read.pairs} & set(gold):
        return _fail(f"{gold_file}: none of its {len(gold)} pair ids is a pair of {split_key(ref)}; "
                     "is it the tag file of another split?")
    try:
        loaded = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        return _fail(str(error))
    evaluation.check_split_labels(ref, args.data_dir, read, loaded.labels)
    items = evaluation.analyze_split(ref, read, args.cache_dir)
    result = evaluate_checkpoint(loaded, items)
    key = split_key(ref)
    truncation = evaluation.count_truncated(loaded.featurizer, items)
    stored = evaluation.store_evaluation(  # never over the recorded predictions_<split> file
        loaded.path, result.predictions, evaluation.data_identity(evaluation.split_source_files(read)),
        evaluation.evaluation_record(result.report, read, truncation, result.unlabelled),
        split_key=key, name=getattr(args, "name", None))
    predictions_file = stored.predictions_file
    notes = read.notes() + ([truncation.describe()] if truncation.pairs else [])

    by_tag, by_genre, tag_note = None, None, ""
    if taxonomy is not None:
        from nlivis.analysis.breakdown import taxonomy_report
        from nlivis.analysis.predictions import Prediction

        predictions = [Prediction(r["id"], r["gold"], r["predicted"], tuple(r["probs"])) for r in result.predictions]
        try:
            by_tag, by_genre, tag_note = taxonomy_report(predictions, loaded.path.name, taxonomy, read.pairs)
        except ValueError as error:
            return _fail(str(error))
    elif args.by_tag:
        from nlivis.analysis.breakdown import accuracy_by_tag_and_source
        from nlivis.analysis.predictions import Prediction

        split_ids = {item.pair.id for item in items}
        gold = {pair_id: names for pair_id, names in gold.items() if pair_id in split_ids}
        automatic, unavailable = tags_by_pair([item.pair for item in items], gold, tag_source)
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


# --------------------------------------------------------------------------------------------- predict

@dataclass
class PairPrediction:
    """One typed pair's answer and what the user should know about how it was read."""

    label: str
    probabilities: dict[str, float]
    truncation: str
    """"" when nothing was cut, else e.g. "premise cut from 60 to 32 tokens"."""
    unknown_words: list[str]
    """Tokens with no vocabulary row (mapped to UNK)."""
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    batch: Any = None
    trace: Any = None
    notices: list[str] = field(default_factory=list)


@torch.no_grad()
def predict_pairs(loaded: LoadedCheckpoint, premise: str, hypothesis: str, trace: bool = False) -> PairPrediction:
    """Label one premise/hypothesis pair. Text that is empty, has no real word (only invisible or control
    characters) or held bytes that were not UTF-8 raises ValueError, as do non-finite outputs; text over the
    cut-offs is cut (as in training) and said so in `truncation` / `notices` (tokens there are escaped and
    cut, see `data.text.shown_token`); unknown words map to UNK."""
    from nlivis.data.text import shown_token, text_problem
    from nlivis.training.evaluation import check_finite

    for name, text in (("premise", premise), ("hypothesis", hypothesis)):
        problem = text_problem(text, name)
        if problem:
            raise ValueError(problem)
    encoded = loaded.featurizer.encode_text_reported(premise, hypothesis)
    batch = encoded.batch.to(next(loaded.model.parameters()).device)
    loaded.model.eval()
    recorded = None
    if trace:
        logits, recorded = loaded.model(batch, trace=True)
    else:
        logits = loaded.model(batch)
    probabilities = check_finite(loaded.model.probabilities(logits.float()), loaded.path)[0].cpu().tolist()
    unknown = [token for side_tokens, ids in ((batch.premise_tokens[0], batch.premise_ids[0]),
                                              (batch.hypothesis_tokens[0], batch.hypothesis_ids[0]))
               for token, token_id in zip(side_tokens, ids.tolist()) if token_id == UNK_ID]
    truncation = encoded.truncation.describe()
    notices = []
    if truncation:
        notices.append(f"{truncation} (this model reads at most {loaded.featurizer.settings.max_premise_len} premise "
                       f"and {loaded.featurizer.settings.max_hypothesis_len} hypothesis tokens)")
    if unknown:
        notices.append(f"{len(unknown)} word(s) not in the vocabulary, read as unknown: "
                       f"{', '.join(shown_token(token) for token in unknown[:10])}"
                       + (" …" if len(unknown) > 10 else ""))
    best = max(range(len(probabilities)), key=probabilities.__getitem__)
    return PairPrediction(loaded.labels[best], dict(zip(loaded.labels, probabilities)), truncation, unknown,
                          batch.premise_tokens[0], batch.hypothesis_tokens[0], batch, recorded, notices)


def predict_command(args) -> int:
    """`python -m nlivis predict CHECKPOINT --premise P --hypothesis H [--json]`."""
    from nlivis.data.text import shown, text_problem

    for name, text in (("premise", args.premise), ("hypothesis", args.hypothesis)):
        problem = text_problem(text, f"--{name}")
        if problem:
            return _fail(problem)
    try:
        loaded = load_checkpoint(args.checkpoint)
    except CheckpointError as error:
        return _fail(str(error))
    try:
        result = predict_pairs(loaded, args.premise, args.hypothesis)
    except ValueError as error:
        return _fail(str(error))
    if args.json:
        print(json.dumps({"label": result.label, "probabilities": result.probabilities,
                          "truncation": result.truncation, "unknown_words": result.unknown_words,
                          "unknown_word_count": len(result.unknown_words),
                          "premise_tokens": result.premise_tokens, "hypothesis_tokens": result.hypothesis_tokens},
                         indent=1))
    else:
        print(f"label: {result.label}")
        width = max(len(label) for label in result.probabilities)
        for label, probability in sorted(result.probabilities.items(), key=lambda kv: -kv[1]):
            print(f"  {label:<{width}}  {probability:.4f}")
        print(f"unknown words: {len(result.unknown_words)}")
    for notice in result.notices:
        print(f"notice: {shown(notice)}", file=sys.stderr)
    return 0
