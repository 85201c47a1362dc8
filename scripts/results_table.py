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

PAPER_MODEL_NAMES = {
    "gcnn": ("GCNN", "GCNN"),
    "diin": ("DIIN", "DIIN"),
    "attentive_conv": ("AttentiveConvNet", "AttentiveConvNet advanced"),
    "esan": ("ESAN", "ESAN"),
    "amn": ("AMN", "AMNs-G (AMNN with GRU)"),
}
"""Family → (paper, the row of its main table that our full config reproduces)."""


def reproduce_command(config: dict, out_name: str) -> str:
    """The `python -m nlivis train` line that produced a checkpoint, from what it recorded."""
    epochs = config.get("training", {}).get("epochs")
    source_epochs = config.get("source_config", {}).get("training", {}).get("epochs")
    parts = ["python -m nlivis train", f"--config {config['config_name']}",
             f"--dataset {config['dataset']['protocol']}", "--data-dir ../shared/data",
             f"--size {config.get('size', 'paper')}", f"--embeddings {config['embeddings']['source']}",
             f"--seed {config['seed']}"]
    if epochs is not None and epochs != source_epochs:
        parts.append(f"--epochs {epochs:g}")
    parts.append(f"--out checkpoints/{out_name}")
    return " ".join(parts)


def checkpoint_rows(root: Path) -> list[dict]:
    rows = []
    for folder in sorted(p for p in root.iterdir() if (p / "COMPLETE").is_file()):
        config = json.loads((folder / "config.json").read_text())
        metrics = json.loads((folder / "metrics.json").read_text())
        report = metrics.get("report", {})
        accuracies = ", ".join(f"{split} {100 * r['accuracy']:.1f}" for split, r in report.items())
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
    args = parser.parse_args()
    print("Reproduced here (reduced protocols: trained on test splits, see the data section):\n")
    print(markdown(checkpoint_rows(Path(args.checkpoints))))
    print("Reported by the papers on the full datasets (not reproduced here):\n")
    print(markdown(paper_rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
