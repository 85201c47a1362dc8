"""Print the README's TaxiNLI tables: every family's mnli-small checkpoint per TaxiNLI category, with the
release's full-data ESIM, BERT-base and bag of words on the same pairs (never typed by hand).

    python scripts/taxinli_table.py [--data-dir ../shared/data] [--checkpoints checkpoints]

Reads each checkpoint's recorded predictions on MultiNLI dev matched and mismatched (what `python -m nlivis
evaluate CHECKPOINT --dataset mnli-small --split mnli_dev_matched --data-dir ../shared/data --by-tag
--tags-file ../shared/data/taxinli/taxinli10k_MNLIDev.tsv --json` reproduces, with the intervals), joins the
TaxiNLI rows to the dev pairs by pairID and prints one markdown table per half: pairs, the majority-label
baseline and each model's accuracy in %, with the widest 95% Wilson interval of our models per row.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.breakdown import REFERENCE_SUFFIX, taxonomy_long  # noqa: E402
from nlivis.store.predictions import find_prediction_files, read_predictions
from nlivis.data.protocols import SplitRef, read_split  # noqa: E402
from nlivis.data.taxonomies import TAXINLI_FILE, join_to_pairs, read_taxinli  # noqa: E402
from nlivis.models.families import FAMILIES  # noqa: E402

REFERENCES = ("ESIM", "BERT-base", "bag of words")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"), help="data root (default ../shared/data)")
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"), help="checkpoint folder (default checkpoints/)")
    args = parser.parse_args(argv)
    taxonomy = read_taxinli(Path(args.data_dir) / TAXINLI_FILE)
    shown = {name: family.label for name, family in FAMILIES.items()  # the papers' five, then MiniLM where trained
             if (Path(args.checkpoints) / f"{name}-mnli-small" / "COMPLETE").is_file()}
    for half in ("matched", "mismatched"):
        pairs = read_split(SplitRef("mnli", f"dev_{half}", "mnli_dev"), args.data_dir).pairs
        rows = join_to_pairs(taxonomy.rows, pairs)
        predictions = {}
        for family, name in shown.items():
            files = find_prediction_files(Path(args.checkpoints) / f"{family}-mnli-small")
            predictions[name] = read_predictions(files[f"mnli_dev_{half}"])
        long = taxonomy_long({half: (predictions, rows)})
        ours = long[~long["reference"]]
        columns = [*shown.values(), *(f"{name}{REFERENCE_SUFFIX}" for name in REFERENCES)]
        print(f"\nMultiNLI dev {half}: {len(rows):,} TaxiNLI pairs; accuracy in % (mnli-small checkpoints: reduced "
              "protocol; ESIM, BERT-base and bag of words: the release's models trained on the full MultiNLI)\n")
        print("| category | pairs | majority label | " + " | ".join(c.replace(REFERENCE_SUFFIX, "") for c in columns)
              + " | widest 95% interval of ours (±) |")
        print("|---|---|---|" + "---|" * len(columns) + "---|")
        for tag in dict.fromkeys(long["tag"]):
            cells = long[long["tag"] == tag].set_index("model")
            first = cells.iloc[0]
            spread = ours[ours["tag"] == tag]
            half_width = 50 * float((spread["ci_high"] - spread["ci_low"]).max())
            print(f"| {tag} | {int(first['count']):,} | {100 * first['majority_accuracy']:.1f} | "
                  + " | ".join(f"{100 * cells.loc[c, 'accuracy']:.1f}" for c in columns) + f" | {half_width:.1f} |")
        overall = {name: sum(p.predicted == p.gold for p in preds if p.id in rows) / len(rows)
                   for name, preds in predictions.items()}
        print("| all TaxiNLI pairs | " + f"{len(rows):,} | – | "
              + " | ".join(f"{100 * overall[c]:.1f}" if c in overall else
                           f"{100 * sum(r.reference_labels()[_column(c)] == r.label for r in rows.values()) / len(rows):.1f}"
                           for c in columns) + " | |")
    for note in taxonomy.notes:
        print(f"\nnote: {note}")
    return 0


def _column(display: str) -> str:
    """The file's column of a reference model's display name."""
    from nlivis.data.taxonomies import REFERENCE_MODELS

    name = display.replace(REFERENCE_SUFFIX, "")
    return next(column for column, shown in REFERENCE_MODELS.items() if shown == name)


if __name__ == "__main__":
    sys.exit(main())
