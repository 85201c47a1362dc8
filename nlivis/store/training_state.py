"""The resumable state of a training run: `<out>/state/` holds model, optimizer, best weights and RNG
states in safetensors, the training dynamics recorded so far (the unfinished epoch's too:
`dynamics.safetensors`, store.dynamics) and `state.json` (counters, schedules, curve); it is replaced
atomically."""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import torch
from safetensors import SafetensorError

from nlivis.store.checkpoints import (
    DYNAMICS_FILE,
    FORMAT_VERSION,
    STATE_FOLDER,
    CheckpointError,
    read_json,
)
from nlivis.store.files import (
    fresh_folder,
    recover_folder,
    replace_folder,
    write_failure,
)
from nlivis.store.dynamics import TrainingDynamics, read_dynamics, write_dynamics
from nlivis.store.weights import load_tensors, save_tensors


@dataclass
class TrainingState:
    """What `--resume` needs besides the tensors: counters, schedules, best dev, RNG states."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    pairs_seen: int = 0
    best_dev_accuracy: float | None = None
    best_step: int | None = None
    optimizer_name: str = ""
    elapsed_s: float = 0.0
    curve: list[dict[str, Any]] = field(default_factory=list)
    """Dev evaluations so far: step, epoch, dev_acc."""
    python_rng: Any = None
    numpy_rng: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)
    """What a resumed run must match (config, dataset, size, seed: training.request.run_identity); empty in
    states saved before it was recorded."""


def flatten_optimizer_state(state: Mapping[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state dict into tensors (for safetensors) and JSON-able rest."""
    tensors: dict[str, torch.Tensor] = {}
    described: dict[str, Any] = {}
    for param_id, entries in state["state"].items():
        described[str(param_id)] = {}
        for name, value in entries.items():
            if torch.is_tensor(value):
                tensors[f"{param_id}.{name}"] = value
                described[str(param_id)][name] = {"tensor": f"{param_id}.{name}"}
            else:
                described[str(param_id)][name] = {"value": value}
    return tensors, {"state": described, "param_groups": state["param_groups"]}


def unflatten_optimizer_state(tensors: Mapping[str, torch.Tensor], meta: Mapping[str, Any]) -> dict[str, Any]:
    state = {int(param_id): {name: (tensors[entry["tensor"]] if "tensor" in entry else entry["value"])
                             for name, entry in entries.items()}
             for param_id, entries in meta["state"].items()}
    groups = [{k: (tuple(v) if isinstance(v, list) and k != "params" else v) for k, v in group.items()}
              for group in meta["param_groups"]]
    return {"state": state, "param_groups": groups}


def save_training_state(
    out_dir: Path,
    state: TrainingState,
    model_state: Mapping[str, torch.Tensor],
    optimizer_state: Mapping[str, Any],
    best_model_state: Mapping[str, torch.Tensor] | None,
    rng_tensors: Mapping[str, torch.Tensor],
    dynamics: TrainingDynamics | None = None,
) -> None:
    """Replace `<out>/state/` atomically with the current training state. A failed write (e.g. a full disk)
    removes the partial folder and raises a `CheckpointError` saying so; the previous state stays usable."""
    out_dir = Path(out_dir)
    building = out_dir / f".{STATE_FOLDER}.partial-{os.getpid()}"
    try:
        fresh_folder(building)
        save_tensors(model_state, building / "model.safetensors")
        optimizer_tensors, optimizer_meta = flatten_optimizer_state(optimizer_state)
        save_tensors(optimizer_tensors, building / "optimizer.safetensors")
        if best_model_state is not None:
            save_tensors(best_model_state, building / "best_model.safetensors")
        save_tensors(rng_tensors, building / "rng.safetensors")
        if dynamics is not None:
            write_dynamics(building / DYNAMICS_FILE, dynamics)
        record = {"format": "nlivis-training-state", "format_version": FORMAT_VERSION,
                  "training": state.__dict__, "optimizer": optimizer_meta}
        (building / "state.json").write_text(json.dumps(record) + "\n", encoding="utf-8")
    except (OSError, SafetensorError) as error:
        shutil.rmtree(building, ignore_errors=True)
        previous = _saved_step(out_dir / STATE_FOLDER)
        kept = (f"the state saved at step {previous} is kept: once there is room, continue with --resume"
                if previous is not None else "no earlier state was saved")
        raise CheckpointError(out_dir, f"saving the training state failed: {write_failure(error, building)}; "
                                       f"the partial files were removed; {kept}") from error
    replace_folder(building, out_dir / STATE_FOLDER)


def _saved_step(folder: Path) -> int | None:
    try:
        return int(json.loads((folder / "state.json").read_text(encoding="utf-8"))["training"]["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class LoadedTrainingState:
    state: TrainingState
    model_state: dict[str, torch.Tensor]
    optimizer_state: dict[str, Any]
    best_model_state: dict[str, torch.Tensor] | None
    rng_tensors: dict[str, torch.Tensor]
    dynamics: TrainingDynamics | None = None
    """None for a state saved before training dynamics were recorded."""


def read_training_state(out_dir: Path) -> tuple[TrainingState, dict[str, Any]]:
    """`<out>/state/state.json`: the counters (a `TrainingState`) and the whole record, without the tensors;
    a missing or damaged state is a `CheckpointError` naming the folder."""
    folder = Path(out_dir) / STATE_FOLDER
    recover_folder(folder)
    if not (folder / "state.json").is_file():
        raise CheckpointError(out_dir, f"nothing to resume: no {STATE_FOLDER}/state.json")
    record = read_json(folder, "state.json")
    try:
        # states saved before the SGD fallback counted steps also carry best_epoch_seen, now unused
        return TrainingState(**{k: v for k, v in record["training"].items() if k != "best_epoch_seen"}), record
    except (KeyError, TypeError) as error:
        raise CheckpointError(folder, f"state.json is not a training state ({error})") from error


def load_training_state(out_dir: Path) -> LoadedTrainingState:
    """Read `<out>/state/` with its tensors; a missing or damaged state is a `CheckpointError` naming the folder."""
    folder = Path(out_dir) / STATE_FOLDER
    state, record = read_training_state(out_dir)
    try:
        optimizer_tensors = load_tensors(folder, folder / "optimizer.safetensors", "optimizer.safetensors")
        optimizer_state = unflatten_optimizer_state(optimizer_tensors, record["optimizer"])
    except (KeyError, TypeError) as error:
        raise CheckpointError(folder, f"state.json is not a training state ({error})") from error
    best = folder / "best_model.safetensors"
    return LoadedTrainingState(
        state=state,
        model_state=load_tensors(folder, folder / "model.safetensors", "model.safetensors"),
        optimizer_state=optimizer_state,
        best_model_state=load_tensors(folder, best, "best_model.safetensors") if best.is_file() else None,
        rng_tensors=load_tensors(folder, folder / "rng.safetensors", "rng.safetensors"),
        dynamics=read_dynamics(folder / DYNAMICS_FILE) if (folder / DYNAMICS_FILE).is_file() else None,
    )
