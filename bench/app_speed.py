"""How fast the app answers, on the five shipped snli-small checkpoints: prints a Markdown table.

    OMP_NUM_THREADS=1 python bench/app_speed.py [--repeats 5] [--skip-umap] [--out bench/results/app_speed.md]

Rows and targets (issue 13; a 2-core machine, warm unless said):
  * five-model pair analysis (< 300 ms): each model reads a new typed pair with traces on, as the Pair
    explorer does (`predict_pairs`), spaCy analysing the pair once for all five — and, for comparison,
    once per model (the earlier behaviour, forced by clearing the memo before each model);
  * page switch (< 1 s): `AppTest` running a page again with the five models loaded (the script's run
    time; the browser's drawing is not included);
  * recolour (< 1 s): the Projection page (1,000 pairs) run again after the colouring changed;
  * cold start to the Home table (< 5 s): a new Python process from start until Home's checkpoint table is
    built (`AppTest`, so the Streamlit server's own start is not included), with the scan importing torch
    as a comparison (what the checkpoint module's top-level `import torch` cost every cold start);
  * first UMAP fit in a new process (< 20 s): import and fit on 1,000 Gaussian vectors of 256 dims, once with
    an empty numba cache (everything compiles) and once more in a new process reading that cache.
Needs the shipped checkpoints in checkpoints/ and the data in ../shared/data (or NLIVIS_DATA).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, SHIPPED, add_out_option, publish

from nlivis.app import paths

SHIPPED_FOLDERS = [ROOT / "checkpoints" / f"{family}-snli-small" for family in SHIPPED]
DATA = Path(os.environ.get("NLIVIS_DATA", ROOT.parent / "shared" / "data"))
PAGES = tuple(page.path for page in (paths.EXPLORER, paths.GATES, paths.ERRORS, paths.ABLATIONS, paths.PROJECTION, paths.HOME))
PROJECTION_PAIRS = 1000

COLD_START = """
import sys, time
started = time.perf_counter()
if sys.argv[1] == "with-torch":
    import torch  # what the checkpoint scan imported before it read checkpoint_files
from streamlit.testing.v1 import AppTest
app = AppTest.from_file(sys.argv[2], default_timeout=120).run()
assert not app.exception and len(app.dataframe[0].value) > 0, app.exception
print(time.perf_counter() - started, "torch" in sys.modules)
"""

UMAP_FIT = """
import time
started = time.perf_counter()
import numpy as np
from nlivis.analysis.projection import project
from nlivis.workflows.projection import default_numba_cache_dir
vectors = np.random.default_rng(0).normal(size=(%d, 256)).astype(np.float32)
project(vectors, method="umap", compiled_code_dir=default_numba_cache_dir())  # NUMBA_CACHE_DIR wins
print(time.perf_counter() - started)
""" % PROJECTION_PAIRS


def median_ms(times: list[float]) -> str:
    return f"{1000 * statistics.median(times):.0f} ms"


def pair_analysis(repeats: int) -> tuple[list[float], list[float]]:
    """Seconds per five-model analysis of a new pair: spaCy once per pair, and once per model."""
    from nlivis.features import sentences as analysis
    from nlivis.inference import load_checkpoint
    from nlivis.inference import predict_pair as predict_pairs

    loaded = [load_checkpoint(folder) for folder in SHIPPED_FOLDERS]
    for model in loaded:
        model.model.eval()
    analysis.analyse_sentences(["A warm-up sentence ."])  # the spaCy pipeline loads outside the timing
    predict_pairs(loaded[0], "A dog runs .", "An animal moves .", trace=True)
    once, per_model = [], []
    for repeat in range(repeats):
        for memo, times in ((True, once), (False, per_model)):
            premise = f"A man in a {'red' if memo else 'blue'} shirt plays guitar number {repeat} on a stage ."
            hypothesis = f"A person is making music for {repeat + 2} friends ."
            started = time.perf_counter()
            for model in loaded:
                if not memo:
                    analysis.analyse_text_pair.cache_clear()
                predict_pairs(model, premise, hypothesis, trace=True)
            times.append(time.perf_counter() - started)
    return once, per_model


def app_runs(repeats: int, cache: Path) -> tuple[dict[str, list[float]], dict[str, list[float]], float]:
    """(page → seconds per warm run, colouring → seconds per warm recolour, first Projection visit in s)."""
    from streamlit.testing.v1 import AppTest

    os.environ.update({"NLIVIS_CHECKPOINTS": str(ROOT / "checkpoints"), "NLIVIS_DATA": str(DATA),
                       "NLIVIS_CACHE_DIR": str(cache)})  # projections and spaCy analyses start empty
    os.environ.pop("NLIVIS_RUNS", None)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    app.multiselect(key="home_selected").set_value([folder.name for folder in SHIPPED_FOLDERS]).run()
    app.session_state["projection_method"] = "pca"  # the fit is timed on its own below; recolouring is the same
    app.session_state["projection_size"] = PROJECTION_PAIRS
    started = time.perf_counter()
    app.switch_page(str(ROOT / "pages/7_Projection.py")).run()
    first_projection = time.perf_counter() - started
    for page in PAGES:  # one visit each, so every page's caches are warm
        app.switch_page(str(ROOT / page)).run()
        assert not app.exception, f"{page}: {app.exception}"
    switches: dict[str, list[float]] = {page: [] for page in PAGES}
    for _ in range(repeats):
        for page in PAGES:
            started = time.perf_counter()
            app.switch_page(str(ROOT / page)).run()
            switches[page].append(time.perf_counter() - started)
    app.switch_page(str(ROOT / "pages/7_Projection.py")).run()
    colourings = ("prediction", "gold", "correctness", "tag")
    app.radio(key="projection_colour").set_value("tag").run()  # tagging the sample (spaCy parse) happens once
    recolours: dict[str, list[float]] = {colour: [] for colour in colourings}
    for _ in range(repeats):
        for colour in colourings:
            started = time.perf_counter()
            app.radio(key="projection_colour").set_value(colour).run()
            recolours[colour].append(time.perf_counter() - started)
            assert not app.exception, app.exception
    return switches, recolours, first_projection


def new_process(script: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """Run `script` in a fresh interpreter; its printed words, and the wall time from spawn as the first."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, check=False)
    wall = time.perf_counter() - started
    if result.returncode:
        raise RuntimeError(f"new process failed:\n{result.stderr[-2000:]}")
    return [f"{wall:.2f}", *result.stdout.split()[-2:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-umap", action="store_true", help="leave out the two UMAP fits in new processes")
    add_out_option(parser)
    args = parser.parse_args()
    missing = [str(folder) for folder in SHIPPED_FOLDERS if not (folder / "COMPLETE").is_file()]
    if missing or not DATA.is_dir():
        sys.exit(f"needs the shipped checkpoints and the data folder; missing: {', '.join(missing) or DATA}")

    rows: list[tuple[str, str, str, str]] = []
    cold = [new_process(COLD_START, mode, str(ROOT / "app.py")) for mode in ("plain", "with-torch", "plain")]
    rows.append(("cold start to the Home table", "< 5 s", f"{float(cold[2][0]):.1f} s",
                 f"new process, wall time from spawn; torch imported: {cold[2][2]} (first run, cold disk: "
                 f"{float(cold[0][0]):.1f} s)"))
    rows.append(("… if the scan imported torch (before)", "", f"{float(cold[1][0]):.1f} s", "the same, `import torch` first"))

    once, per_model = pair_analysis(args.repeats)
    rows.append(("five-model pair analysis (warm)", "< 300 ms", median_ms(once),
                 f"median of {args.repeats} new pairs, traces on, spaCy once per pair"))
    rows.append(("… spaCy once per model (before)", "", median_ms(per_model), "the same pairs' cost with the memo cleared per model"))

    with tempfile.TemporaryDirectory() as cache:
        switches, recolours, first_projection = app_runs(args.repeats, Path(cache))
    for page, times in switches.items():
        rows.append((f"page switch: {Path(page).stem.split('_', 1)[1].replace('_', ' ')}", "< 1 s", median_ms(times),
                     f"AppTest run, five models loaded, median of {args.repeats}"))
    for colour, times in recolours.items():
        rows.append((f"recolour by {colour}", "< 1 s", median_ms(times), f"Projection of {PROJECTION_PAIRS} pairs, median of {args.repeats}"))
    rows.append(("first Projection visit (gcnn, PCA)", "", f"{first_projection:.1f} s",
                 f"spaCy on {PROJECTION_PAIRS} pairs, one model pass for vectors and predictions"))

    if not args.skip_umap:
        with tempfile.TemporaryDirectory() as numba_cache:
            compiled = new_process(UMAP_FIT, env={"NUMBA_CACHE_DIR": numba_cache})
            reused = new_process(UMAP_FIT, env={"NUMBA_CACHE_DIR": numba_cache})
        rows.append(("first UMAP fit, new process, numba cache filled", "< 20 s", f"{float(reused[0]):.1f} s",
                     f"{PROJECTION_PAIRS}×256 vectors, wall time incl. imports"))
        rows.append(("… with an empty numba cache", "", f"{float(compiled[0]):.1f} s", "everything compiles (once per machine)"))

    load = os.getloadavg()
    lines = [f"App speed, shipped snli-small models ({os.cpu_count()} CPUs, load average {load[0]:.1f} at the end, "
             f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})", "",
             "| measurement | target | measured | how |", "|---|---|---|---|"]
    lines += [f"| {name} | {target} | {value} | {how} |" for name, target, value, how in rows]
    publish(lines, args.out)


if __name__ == "__main__":
    main()
