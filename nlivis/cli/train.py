"""Train a model under a protocol and write its checkpoint folder.

    python -m nlivis train --config gcnn --dataset snli-small --data-dir ../shared/data \
        --out checkpoints/gcnn-snli-small --size shipped --embeddings minilm

The output folder must be new, empty or this run's own; Ctrl-C, SIGTERM or a file <out>/STOP written while the
run trains saves the state, and --resume continues it to the same weights as an uninterrupted run. Every run
records its training dynamics (see `python -m nlivis datamap`). `--augment antonym,exclusive,…` adds label-fixed
edits of the training pairs to every epoch (nlivis.training.augment). Progress goes to stderr: a bar on a terminal,
a plain line every 5% of the steps when stderr is a file.
"""
from __future__ import annotations

import argparse
import sys

from nlivis.cli.common import augment_kinds, augment_ratio, epochs, fail, positive_int, seed, share
from nlivis.training.augment import AUGMENT_KINDS, DEFAULT_AUGMENT_RATIO, DEFAULT_NEGATED_SHARE
from nlivis.store.checkpoints import CheckpointError
from nlivis.training.config import load_config
from nlivis.training.request import TrainRequest
from nlivis.training.stopping import TrainingStopped


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True,
                        help="config name in configs/ (e.g. gcnn, diin-no_conv) or the path of a TOML config")
    parser.add_argument("--dataset", required=True,
                        help="protocol (snli-small, mnli-small, quora-small) or full dataset (snli, mnli, quora); "
                             "selects on the dev split, never on a test split")
    parser.add_argument("--data-dir", required=True,
                        help="folder holding the data: for a protocol the data root (e.g. ../shared/data), for a "
                             "full dataset its own folder")
    parser.add_argument("--out", required=True, help="checkpoint folder to write (new, empty, or this run's own)")
    parser.add_argument("--model", default=None, help="model name to train instead of the config's (default: the config's)")
    parser.add_argument("--size", default="paper", choices=["paper", "shipped"],
                        help="paper: the config as the paper sets it; shipped: with the config's [shipped] overrides "
                             "(the reduced CPU size of the shipped checkpoints)")
    parser.add_argument("--embeddings", default=None,
                        help="word vectors: random | minilm | glove:PATH (default: the config's [features] embeddings)")
    parser.add_argument("--epochs", type=epochs, default=None,
                        help="epochs to train, fractions allowed (default: the config's [training] epochs)")
    parser.add_argument("--max-steps", type=positive_int, default=None,
                        help="stop after this many optimizer steps, if that comes before the epochs (default: no limit)")
    parser.add_argument("--seed", type=seed, default=1,
                        help="seed of initialisation, batching and dropout; the same seed gives the same run")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                        help="auto uses CUDA when present, else the CPU")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the folder's last saved state; the run must be the saved one (same "
                             "config, --dataset, --size, --seed, --embeddings, --model and "
                             "--augment/--augment-ratio/--augment-negated-share/--augment-exclusive-twins: "
                             "a difference is refused), only --epochs and --max-steps may change")
    parser.add_argument("--augment", type=augment_kinds, default=(), metavar="KIND[,KIND…]",
                        help="add label-fixed edits of the training pairs to every epoch, made by the edit engine: "
                             f"{', '.join(AUGMENT_KINDS)} (one or more, comma-separated; only edits whose label logic "
                             "fixes are added, with ids derived from their originals; see nlivis.training.augment; "
                             "default: none)")
    parser.add_argument("--augment-ratio", type=augment_ratio, default=None, metavar="R",
                        help="with --augment: at most R augmented pairs per training pair (R × the training pairs in "
                             "all, shared evenly among the kinds, drawn once with --seed and added to every epoch; "
                             f"default: {DEFAULT_AUGMENT_RATIO:g})")
    parser.add_argument("--augment-negated-share", type=share, default=None, metavar="S",
                        help="with --augment: the share (0 to 1) of each label's augmented pairs taken from the "
                             "premises' negated copies paired with themselves ('A man is not driving a car' / '… a "
                             "jeep'), each with its unnegated twin ('A man is driving a car' / '… a jeep'), so that "
                             "only the negation decides a hypernym's or hyponym's label; the rest is drawn as "
                             "before. Needs the hypernym or hyponym kind (and number for the contradictions) "
                             f"(default: {DEFAULT_NEGATED_SHARE:g})")
    parser.add_argument("--augment-exclusive-twins", action="store_true",
                        help="with --augment-negated-share above 0: the twins also hold the negated verb's object "
                             "swapped for an exclusive one, neutral under the negation ('A man is not playing a "
                             "guitar' / '… a violin') and a contradiction in its twin ('A man is playing a guitar' / "
                             "'… a violin'), balanced by number swaps and parallel twins drawn alone; needs the "
                             "exclusive kind (default: off, the twins of hypernyms, hyponyms, numbers and synonyms "
                             "only)")
    parser.add_argument("--cache-dir", default=None,
                        help="cache folder for spaCy analyses and word pieces (default: $NLIVIS_CACHE_DIR or ~/.cache/nlivis)")


def run(args: argparse.Namespace) -> int:
    from nlivis.training.distributed import DistributedContext
    from nlivis.training.trainer import train

    try:
        request = TrainRequest(config=load_config(args.config), dataset=args.dataset, data_dir=args.data_dir,
                               out_dir=args.out, device=args.device, seed=args.seed, max_steps=args.max_steps,
                               epochs=args.epochs, embeddings=args.embeddings, resume=args.resume, size=args.size,
                               cache_dir=args.cache_dir, model_name=args.model, augment=args.augment,
                               augment_ratio=args.augment_ratio, augment_negated_share=args.augment_negated_share,
                               augment_exclusive_twins=args.augment_exclusive_twins)
        info = train(request)
    except TrainingStopped as stopped:
        print(str(stopped), file=sys.stderr)
        return 130
    except CheckpointError as error:
        return fail(str(error))
    if DistributedContext.from_environment().is_main:
        accuracy = "n/a" if info.dev_accuracy is None else f"{info.dev_accuracy:.4f}"
        print(f"checkpoint: {info.path}\nmodel: {info.model} ({info.parameters:,} parameters without word embeddings)\n"
              f"best {info.select_split} accuracy: {accuracy}")
    return 0
