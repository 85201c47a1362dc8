"""What a fresh server's first visit of Error analysis computes, in CPU seconds, an earlier commit against this one.

    python bench/first_visits.py BEFORE [--rounds 2] [--data-dir ../shared/data] [--out FILE]

Six measurements, each in a fresh process (cold: nothing cached, imports paid) and each printing a digest of
what it computed, so before and after are seen to give the same results:

- `tokens`: the split tab's tokens, unknown words and cut-offs for the five default models
  (`app.cache.samples.token_counts` and `split_truncation`) on snli_dev and mnli_dev_matched, the split already read;
- `taxinli`: the TaxiNLI tables (`analysis.breakdown.taxonomy_long`, category and genre) for the MultiNLI
  checkpoints on both dev halves, predictions already read;
- `predictions`: `store.predictions.read_predictions` of the largest shipped predictions file, 20 times;
- `load`: `inference.load_checkpoint` of the five MultiNLI checkpoints, torch already imported;
- `page` and `page-table7`: the whole Error analysis page (Streamlit's AppTest, no background warm-up, the process's
  CPU from before the app is made) opened by URL with the five MultiNLI checkpoints on mnli_dev_matched, on its
  first tab and on "By annotation tag (Table 7)" (with the TaxiNLI tables); the digest covers its tables and captions.

BEFORE's `nlivis/`, `app.py` and `pages/` are extracted into a temporary folder (`harness.commit_tree`); both sides
read this checkout's checkpoints and the same data folder, and the rounds alternate before and after under the same load.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, Report, add_out_option, command_line, commit_tree, load_average

MEASURE = r'''
import hashlib, json, logging, os, sys, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
what, checkpoints, data = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])


def digest(value):
    return hashlib.sha256(value.encode()).hexdigest()[:12]


if what == "tokens":
    from nlivis.app import cache
    from nlivis.app.cache import samples
    from nlivis.store.files import folder_stamp
    folders = cache.default_model_folders()
    models = [cache.Model(f.name, str(f), cache.load_cached(str(f), folder_stamp(str(f))), "#000") for f in folders]
    keys = ("snli_dev", "mnli_dev_matched")
    for key in keys:
        cache.read_split_cached(*cache.local_split(key))
    start = time.process_time()
    found = {(m.name, key): (samples.split_truncation(m, key), samples.token_counts(m, key))
             for key in keys for m in models}
    cpu = time.process_time() - start
    shown = repr(sorted((k, v[0], sorted(v[1].items()) if v[1] else None) for k, v in found.items()))
elif what == "taxinli":
    from nlivis.analysis.breakdown import taxonomy_long
    from nlivis.app import cache
    from nlivis.data.protocols import read_split
    from nlivis.data.taxonomies import find_taxinli_file, join_to_pairs, read_taxinli
    from nlivis.store.predictions import find_prediction_files, read_predictions
    taxonomy, splits = read_taxinli(find_taxinli_file(data)), cache.local_splits()
    folders = sorted(f for f in checkpoints.glob("*-mnli-small") if "minilm" not in f.name)
    halves = {}
    for half in ("matched", "mismatched"):
        key = f"mnli_dev_{half}"
        rows = join_to_pairs(taxonomy.rows, read_split(splits[key], data).pairs)
        halves[half] = ({f.name: read_predictions(find_prediction_files(f)[key]) for f in folders}, rows)
    start = time.process_time()
    tables = taxonomy_long(halves), taxonomy_long(halves, by="genre")
    cpu = time.process_time() - start
    shown = "".join(t.to_csv() + repr((t.dtypes.tolist(), t.attrs)) for t in tables)
elif what == "load":
    import torch  # noqa: F401  (its import is not what this measures)
    from nlivis.inference import load_checkpoint
    start = time.process_time()
    loaded = [load_checkpoint(checkpoints / f"{family}-mnli-small")
              for family in ("amn", "attentive_conv", "diin", "esan", "gcnn")]
    cpu = time.process_time() - start
    shown = repr([(key, value.dtype, value.requires_grad,
                   hashlib.sha256(value.detach().float().numpy().tobytes()).digest())
                  for one in loaded for key, value in one.model.state_dict(keep_vars=True).items()])
elif what.startswith("page"):
    os.environ["NLIVIS_WARM_UP"] = "0"
    os.environ["NLIVIS_CHECKPOINTS"] = str(checkpoints)
    start = time.process_time()
    from streamlit.testing.v1 import AppTest
    app = AppTest.from_file(os.path.abspath("app.py"), default_timeout=600)
    models = ",".join(f"{family}-mnli-small" for family in ("amn", "attentive_conv", "diin", "esan", "gcnn"))
    tab = {"tab": "By annotation tag (Table 7)"} if what == "page-table7" else {}
    app.query_params.update({"models": models, "split": "mnli_dev_matched", **tab})
    app.switch_page(os.path.abspath("pages/5_Error_analysis.py")).run()
    assert not app.exception, app.exception
    cpu = time.process_time() - start
    shown = repr([frame.value.to_csv() for frame in app.dataframe]) + repr([caption.value for caption in app.caption])
else:
    from nlivis.store.predictions import read_predictions
    path = max(checkpoints.glob("*/predictions_*"), key=lambda p: (p.stat().st_size, p.name))
    start = time.process_time()
    for _ in range(20):
        read = read_predictions(path)
    cpu = time.process_time() - start
    shown = repr(read)
print(json.dumps({"cpu": cpu, "digest": digest(shown)}))
'''

MEASUREMENTS = ("load", "tokens", "taxinli", "predictions", "page", "page-table7")


def measure(package_root: Path, what: str, data_dir: Path) -> dict:
    """One measurement in a fresh process whose `nlivis` (and app) is `package_root`'s."""
    environment = {**os.environ, "PYTHONPATH": str(package_root), "NLIVIS_DATA": str(data_dir),
                   "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", MEASURE, what, str(ROOT / "checkpoints"), str(data_dir)],
                          cwd=package_root, env=environment, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the commit to compare with (its nlivis/)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    add_out_option(parser)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Report(options.out) as report:
        before = commit_tree(options.before, Path(folder) / "before")
        app = subprocess.run(["git", "archive", options.before, "app.py", "pages"], cwd=ROOT, check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=app, check=True)
        (before / "checkpoints").symlink_to(ROOT / "checkpoints")
        report.print(command_line("CPU seconds of each measurement, cold, in a fresh process; rounds alternate"))
        report.print(load_average("start"))
        report.print("")
        report.print("| measurement | round | before CPU s | after CPU s | before digest | after digest |")
        report.print("|---|---|---|---|---|---|")
        for what in MEASUREMENTS:
            for round_number in range(1, options.rounds + 1):
                old = measure(before, what, options.data_dir.resolve())
                new = measure(ROOT, what, options.data_dir.resolve())
                report.print(f"| {what} | {round_number} | {old['cpu']:.2f} | {new['cpu']:.2f} | {old['digest']} | "
                             f"{new['digest']} |")
        report.print("")
        report.print(load_average("end"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
