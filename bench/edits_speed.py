"""Edits of one pair through the five shipped snli-small models, warm (issue 22: ≤ 50 edits × 5 models ≤ 1 s).

    OMP_NUM_THREADS=1 python bench/edits_speed.py [--threads 1] [--out FILE]

Warm means the models, spaCy's pipelines and WordNet are loaded (one pair is run first and not timed).
Each timed pair is new to the process, so its sentences and all its edited sentences are parsed and
analysed by spaCy for the first time, as for a pair a user types: the row is what `python -m nlivis edits`
costs after start-up. The columns split one `run_edits` call into proposing the edits (spaCy parse of the
two sentences, WordNet lookups, expectation logic), spaCy analysis of the new sentences, and the five
models' batched predictions; "total" is their sum; the last column runs the swapped pair (also new) through
the one `run_edits` call the CLI makes, with its wall and CPU time (on a busy shared machine, one thread's
CPU time is close to the wall time the call would take on an idle one). Prints the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from harness import SHIPPED, add_checkpoints_option, add_out_option, add_threads_option, publish, use_threads

WARM_UP = ("A dog is running in the snow.", "An animal is outside.", "entailment")
PAIRS = (
    ("A tall man in a blue shirt is playing a guitar on the street.", "A man is playing a guitar.", "entailment"),
    ("Two women are sitting on a wooden bench in the park.", "Two women are standing.", "contradiction"),
    ("A young girl is eating an apple in the kitchen.", "A girl is eating a red apple.", "neutral"),
    ("The old woman does not like her new car.", "A woman has a car.", "entailment"),
    ("Three boys are playing soccer on a green field.", "Some boys are playing a sport.", "entailment"),
    ("A black dog jumps over a fence to catch a ball.", "A cat is sleeping on the couch.", "contradiction"),
    ("John gave Mary a cup of coffee in the morning.", "Mary got a drink from John.", "entailment"),
    ("A woman wearing a hat is riding a bicycle down a busy street.", "A woman is riding a motorcycle.",
     "contradiction"),
    ("Several children are swimming in a small lake.", "The children are wet.", "entailment"),
    ("A man with a beard is cooking dinner for his family.", "A man is cooking.", "entailment"),
    ("A tall young man in a red shirt and a black hat is playing a wooden guitar for two small children in the "
     "busy park.", "A young man in a red shirt and a hat is playing a guitar for two small children.", "entailment"),
    ("An old woman in a green dress is selling fresh bread and red apples to three tourists at a busy market.",
     "An old woman in a dress is selling fresh bread and apples to three tourists.", "entailment"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_threads_option(parser)
    add_checkpoints_option(parser)
    add_out_option(parser)
    args = parser.parse_args(argv)

    import torch

    from nlivis.features.dataset import analyse_text_pairs
    from nlivis.workflows.edits import predict_items, run_edits
    from nlivis.analysis.edits import propose_edits
    from nlivis.inference import load_checkpoint

    use_threads(args.threads)
    loaded = [load_checkpoint(Path(args.checkpoints) / f"{family}-snli-small") for family in SHIPPED]
    run_edits(loaded, *WARM_UP)

    rows = []
    for premise, hypothesis, label in PAIRS:
        start = time.perf_counter()
        edits = propose_edits(premise, hypothesis, label)
        proposed = time.perf_counter()
        pairs = [(premise, hypothesis), *((e.premise, e.hypothesis) for e in edits)]
        items = analyse_text_pairs(pairs)
        analysed = time.perf_counter()
        predict_items(loaded, items)
        predicted = time.perf_counter()
        # the same work through the one call the CLI makes, on a second new pair (the swapped one)
        call_start, cpu_start = time.perf_counter(), time.process_time()
        run = run_edits(loaded, hypothesis, premise)
        total, cpu = time.perf_counter() - call_start, time.process_time() - cpu_start
        rows.append((premise, len(edits), proposed - start, analysed - proposed, predicted - analysed,
                     predicted - start, len(run.outcomes), total, cpu))

    load = os.getloadavg()[0]
    lines = [f"Edits × {len(SHIPPED)} shipped snli-small models, warm, new sentences each pair "
             f"(torch threads {torch.get_num_threads()}, 1-min load {load:.1f}):", "",
             "| pair (premise) | edits | propose (s) | spaCy (s) | 5 models (s) | total (s) | swapped pair: edits, "
             "run_edits wall / CPU (s) |",
             "|---|---|---|---|---|---|---|"]
    for premise, count, propose, spacy, models, total, swapped_count, swapped_total, cpu in rows:
        lines.append(f"| {premise[:48]} | {count} | {propose:.3f} | {spacy:.3f} | {models:.3f} | {total:.3f} | "
                     f"{swapped_count}, {swapped_total:.3f} / {cpu:.3f} |")
    totals = [row[5] for row in rows] + [row[7] for row in rows]
    cpus = [row[8] for row in rows]
    lines += ["", f"wall: median {statistics.median(totals):.3f} s, max {max(totals):.3f} s over {len(totals)} new "
                  f"pairs with {min(r[1] for r in rows)}–{max(max(r[1], r[6]) for r in rows)} edits each; CPU time of "
                  f"run_edits (one thread: close to the wall time of an idle machine): median "
                  f"{statistics.median(cpus):.3f} s, max {max(cpus):.3f} s"]
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
