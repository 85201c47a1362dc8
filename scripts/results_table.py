"""Print the README's results tables from what the checkpoints record (never typed by hand).

    python scripts/results_table.py [--checkpoints checkpoints]

Table 1: every checkpoint folder — model, protocol, accuracy on each report split, parameters, training
time, device, embedding source and the command that reproduces it. Table 2: what the papers report for
the same models on the full datasets (nlivis.analysis.paper_tables), labelled as such.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.paper_tables import main_results  # noqa: E402
from nlivis.training.config import apply_size, load_config  # noqa: E402

PAPER_MODEL_NAMES = {
    "gcnn": ("GCNN", "GCNN"),
    "diin": ("DIIN", "DIIN"),
    "attentive_conv": ("AttentiveConvNet", "AttentiveConvNet advanced"),
    "esan": ("ESAN", "ESAN"),
    "amn": ("AMN", "AMNs-G (AMNN with GRU)"),
}
"""Family → (paper, the row of its main table that our full config reproduces)."""
START_MARK, END_MARK = "<!-- results:start -->", "<!-- results:end -->"
ADDED_MARK = "†"
ADDED_NOTE = (f"{ADDED_MARK} a report split the protocol gained after training (mnli-small: the full MultiNLI dev "
              "sets), recorded with the same weights by `python scripts/report_added_splits.py`.\n")


STOPPED_EARLY = 1e-3
"""Epochs a complete run may fall short of its --epochs by (rounding) before its steps are read as --max-steps."""


def reproduce_command(config: dict, out_name: str) -> str:
    """The `python -m nlivis train` line that produced a checkpoint, from what it recorded."""
    epochs = config.get("training", {}).get("epochs")
    # The config file as it reads today at the recorded size; an --epochs override differs from it.
    as_written = apply_size(load_config(config["config_name"]), config.get("size", "paper"))
    source_epochs = as_written.get("training", {}).get("epochs")
    parts = ["python -m nlivis train", f"--config {config['config_name']}",
             f"--dataset {config['dataset']['protocol']}", "--data-dir ../shared/data",
             f"--size {config.get('size', 'paper')}", f"--embeddings {config['embeddings']['source']}",
             f"--seed {config['seed']}"]
    if epochs is not None and epochs != source_epochs:
        parts.append(f"--epochs {epochs:g}")
    if epochs is not None and "steps" in config and config.get("epochs", epochs) < epochs - STOPPED_EARLY:
        parts.append(f"--max-steps {config['steps']}")  # a finished run short of its epochs was cut by --max-steps
    if augmentation := config.get("augmentation"):
        parts.append(f"--augment {','.join(augmentation['kinds'])} --augment-ratio {augmentation['ratio']:g}")
        if augmentation.get("negated_share"):
            parts.append(f"--augment-negated-share {augmentation['negated_share']:g}")
        if augmentation.get("exclusive_twins"):
            parts.append("--augment-exclusive-twins")
    parts.append(f"--out checkpoints/{out_name}")
    return " ".join(parts)


def checkpoint_rows(root: Path) -> list[dict]:
    rows = []
    for folder in sorted(p for p in root.iterdir() if (p / "COMPLETE").is_file()):
        config = json.loads((folder / "config.json").read_text())
        metrics = json.loads((folder / "metrics.json").read_text())
        report = metrics.get("report", {})
        accuracies = ", ".join(f"{split} {100 * r['accuracy']:.1f}{ADDED_MARK if r.get('added_after_training') else ''}"
                               for split, r in report.items())
        rows.append({
            "checkpoint": folder.name,
            "model": config["config_name"],
            "protocol": config["dataset"]["protocol"],
            "accuracy (%)": accuracies,
            "select": f"{metrics['select_split']} {100 * metrics['best_dev_accuracy']:.1f}",
            "parameters": f"{config['parameters'] / 1e6:.2f}M",
            "train time": f"{config['wall_time_s'] / 60:.0f} min",
            "epochs": f"{config['epochs']:.1f}",
            "device": config["device"],
            "embeddings": config["embeddings"]["source"],
            "command": f"`{reproduce_command(config, folder.name)}`",
        })
    return rows


def paper_rows() -> list[dict]:
    table = main_results()
    rows = []
    for family, (paper, model) in PAPER_MODEL_NAMES.items():
        own = table[(table.paper == paper) & (table.model == model) & (table.unit == "%")
                    & (table.split != "train")]
        for _, r in own.iterrows():
            rows.append({"model": family, "paper row": f"{paper} {r['table']}: {model}",
                         "dataset (full training data)": f"{r['dataset']} {r['split']}",
                         "accuracy (%)": f"{r['value']:.1f}"})
    return rows


def markdown(rows: list[dict]) -> str:
    if not rows:
        return "(no complete checkpoints found)\n"
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"))
    parser.add_argument("--write-readme", action="store_true",
                        help="replace the README's section between the results markers instead of printing")
    args = parser.parse_args()
    rows = checkpoint_rows(Path(args.checkpoints))
    text = ("Reproduced here (reduced protocols: trained on test splits, see the data section above; "
            "generated by `python scripts/results_table.py`):\n\n"
            + markdown(rows)
            + ("\n" + ADDED_NOTE if any(ADDED_MARK in row["accuracy (%)"] for row in rows) else "")
            + "\nReported by the papers on the full datasets (not reproduced here):\n\n"
            + markdown(paper_rows()))
    if not args.write_readme:
        print(text)
        return 0
    readme = ROOT / "README.md"
    content = readme.read_text(encoding="utf-8")
    start, end = content.index(START_MARK) + len(START_MARK), content.index(END_MARK)
    readme.write_text(content[:start] + "\n" + text + content[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
