"""Trained checkpoints give the same answers with today's model code as with an earlier commit's.

    python bench/checkpoint_outputs.py 197deb5 gcnn-snli-small amn-snli-small ...

Loads each named folder under checkpoints/ with the models of COMMIT (git archive into a temporary
folder, run in a subprocess) and with the working tree's, predicts three pairs with traces on, and
prints the largest probability difference and whether every predicted label agrees.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, commit_tree

PAIRS = [("A man is playing a guitar on the stage .", "A person is making music ."),
         ("Two dogs run through a snowy field while children watch from the fence .", "Animals are sleeping indoors ."),
         ("A woman in a red coat waits for the bus in the rain .", "Someone is outside .")]
PREDICT = """
import json, sys
import torch
torch.set_num_threads(1)
from nlivis.training.checkpoint import load_checkpoint
from nlivis.training.commands import predict_pairs
pairs, folders = json.loads(sys.argv[1]), sys.argv[2:]
out = {}
for folder in folders:
    model = load_checkpoint(folder)
    out[folder] = [predict_pairs(model, p, h, trace=True).probabilities for p, h in pairs]
print(json.dumps(out))
"""


def predictions(tree: Path, folders: list[str]) -> dict:
    result = subprocess.run([sys.executable, "-c", PREDICT, json.dumps(PAIRS), *folders], cwd=tree,
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    commit, names = argv[0], argv[1:]
    folders = [str(ROOT / "checkpoints" / name) for name in names]
    with tempfile.TemporaryDirectory(prefix="nlivis-models-") as tree:
        commit_tree(commit, Path(tree))
        before = predictions(Path(tree), folders)
    after = predictions(ROOT, folders)
    same = True
    for name, folder in zip(names, folders):
        diff = max(abs(a[label] - b[label]) for pa, pb in zip(before[folder], after[folder]) for a, b in [(pa, pb)]
                   for label in a)
        labels = [max(p, key=p.get) for p in before[folder]] == [max(p, key=p.get) for p in after[folder]]
        same &= labels and diff < 1e-5
        print(f"{name:32s} max |Δ probability| {diff:.1e}; labels {'agree' if labels else 'DIFFER'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
