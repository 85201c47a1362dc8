"""Where a server's time went, from py-spy's raw output: seconds per thread, then the app's own frames.

    python bench/pyspy_summary.py FILE.raw [--rate 50] [--top 12] [--depth 4] [--imports]

FILE is `py-spy record -f raw --threads` of a `streamlit run app.py` server (e.g. `bench/first_page.py --profile`).
Samples whose innermost frame is a wait are dropped (a thread blocked on a lock, a condition, the event loop's
select, Streamlit's file watchers sleeping between polls: py-spy counts some of these as active). Per thread: its
seconds (samples / rate); then, per thread with work, the `--top` chains of nlivis frames (the first `--depth` of
them from the outermost, the page's file included) by seconds, which says what the app itself spent them on.
`--imports` adds the page's thread by the first library (not nlivis, not Streamlit) whose import a sample is in —
torch, pandas, numpy — or else by its nlivis chain: what a first page's run imports and what it computes.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

WAITS = ("Condition.wait", "Event.wait", "EpollSelector.select", "select (selectors", "_wait_for_tstate_lock",
         "SimpleQueue.get", "PollingPathWatcher._schedule.<locals>.task", "sleep",
         "_worker (concurrent/futures/thread.py:81)")
"""Innermost frames that mean the thread was waiting, not working (the last: an idle executor thread's queue
get, at its line in Python 3.11's concurrent/futures/thread.py)."""


def summarise(path: Path, rate: float, top: int, depth: int) -> list[str]:
    seconds: Counter[str] = Counter()
    chains: dict[str, Counter[str]] = defaultdict(Counter)
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or any(wait in frames[-1] for wait in WAITS):
            continue
        thread = re.sub(r"\(\d+\)", "", frames[0]).replace("thread", "").strip(" :") or "unnamed"
        seconds[thread] += int(count) / rate
        own = [re.sub(r":\d+\)", ")", f) for f in frames[1:] if "nlivis/" in f or "pages/" in f or "_mpa_v1" in f]
        chain = " > ".join(own[:depth]) or "(no nlivis frame: Streamlit, imports of the server)"
        chains[thread][chain] += int(count) / rate
    lines = [f"{path.name}: " + ", ".join(f"{thread} {s:.2f} s" for thread, s in seconds.most_common())]
    for thread, _ in seconds.most_common():
        if seconds[thread] < 0.5:
            continue
        lines.append(f"  {thread}:")
        lines += [f"    {s:6.2f} s  {chain}" for chain, s in chains[thread].most_common(top)]
    return lines


def imports(path: Path, rate: float, top: int, depth: int) -> list[str]:
    seconds: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or "scriptThread" not in frames[0] or any(wait in frames[-1] for wait in WAITS):
            continue
        library = next((f for f in frames if f.startswith("<module> (") and "/" in f  # a package's module (the
                        and not any(own in f for own in ("nlivis/", "streamlit/"))), None)  # page's file: no folder)
        own = [re.sub(r":\d+\)", ")", f) for f in frames[1:] if "nlivis/" in f]
        key = re.sub(r":\d+\)", ")", library) if library else " > ".join(own[:depth]) or "(Streamlit)"
        seconds[key] += int(count) / rate
    return [f"  the page's thread by library imported, else by nlivis chain ({path.name}):"] + \
        [f"    {s:6.2f} s  {key}" for key, s in seconds.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--rate", type=float, default=50.0, help="py-spy's samples per second (its -r; default 50)")
    parser.add_argument("--top", type=int, default=12, help="chains of nlivis frames shown per thread (default 12)")
    parser.add_argument("--depth", type=int, default=4, help="nlivis frames per chain, outermost first (default 4)")
    parser.add_argument("--imports", action="store_true", help="also the page's thread by the library imported")
    args = parser.parse_args()
    for path in args.files:
        lines = summarise(path, args.rate, args.top, args.depth)
        print("\n".join(lines + (imports(path, args.rate, args.top, args.depth) if args.imports else [])) + "\n")


if __name__ == "__main__":
    main()
