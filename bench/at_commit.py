"""Run `python -m nlivis bench` on the models of an earlier commit, with today's benchmark code.

    python bench/at_commit.py COMMIT [bench options...]
    python bench/at_commit.py 197deb5 --models amn --sizes shipped,paper --skip-app

`nlivis/` and `configs/` are taken from COMMIT (git archive into a temporary folder), then the current
`nlivis/workflows/bench.py` is copied over (`harness.with_todays_bench`: commits from issue 33 on), so a
before/after pair differs only in the model code. The app
latency reads the checkpoints of this working tree unless --checkpoints says otherwise.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, commit_tree, with_todays_bench


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    commit, options = argv[0], argv[1:]
    if "--out" in options:  # the benchmark runs in a temporary folder: make the path absolute
        index = options.index("--out") + 1
        options[index] = str(Path(options[index]).resolve())
    if "--checkpoints" not in options:
        options += ["--checkpoints", str(ROOT / "checkpoints")]
    with tempfile.TemporaryDirectory(prefix="nlivis-bench-") as folder:
        with_todays_bench(commit_tree(commit, Path(folder)))
        print(f"models of {commit}, benchmark code of the working tree", flush=True)
        return subprocess.run([sys.executable, "-m", "nlivis", "bench", *options], cwd=folder).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
