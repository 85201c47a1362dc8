"""Which checkpoints there are and which a new session loads: the complete checkpoint folders under a list of
roots (broken folders named with their problem, a training run in progress said as such, a name that an earlier
root already has left out), and the default models. Each root is scanned through a callable the caller hands in
(`ScanRoot`), so the app caches a root's scan until a folder in it changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from nlivis.models.families import SHIPPED_FAMILIES, family_rank
from nlivis.store.checkpoints import MANIFEST, CheckpointError, CheckpointInfo, find_checkpoints, read_json
from nlivis.training.run_folder import live_lock
from nlivis.training.runs import read_run

DEFAULT_PROTOCOL = "snli-small"
"""The protocol whose checkpoints a new session loads (the shipped models')."""

ScanRoot = Callable[[Path], tuple[list[CheckpointInfo], list[tuple[str, str]]]]
"""A root → (its complete checkpoints, (folder, problem) of each folder that cannot be used)."""


@dataclass
class FoundCheckpoints:
    """What a scan found: loadable checkpoints, broken folders with their problem, roots that do not exist, and
    copies of a listed checkpoint found again in a later root."""

    good: list[CheckpointInfo] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)
    copies: dict[str, list[str]] = field(default_factory=dict)
    """Name → the later folders that hold the very checkpoint listed under that name (`same_model`)."""


SAME_MODEL_FILES = ("config.json", "model.safetensors")
"""What makes two folders one checkpoint: the same configuration and the same weights (the manifests' sha256);
evaluations written into one of them later do not make it another model."""


def same_model(first: Path, second: Path) -> bool:
    """Whether two checkpoint folders hold the same trained model (`SAME_MODEL_FILES` by their manifests' sha256),
    e.g. a copy of a shipped checkpoint in a folder of one's own; False when either manifest is unreadable."""
    try:
        files = [read_json(folder, MANIFEST).get("files", {}) for folder in (first, second)]
    except CheckpointError:
        return False
    hashes = [[entry.get("sha256") if isinstance(entry := listed.get(name), dict) else None
               for name in SAME_MODEL_FILES] for listed in files]
    return None not in hashes[0] and hashes[0] == hashes[1]


def scan_root(root: Path) -> tuple[list[CheckpointInfo], list[tuple[str, str]]]:
    """(the complete checkpoints in `root`, (folder, problem) of each other folder); a folder whose training run
    is still going says so instead of what it lacks."""
    broken: list[Any] = []
    good = find_checkpoints(root, broken=broken)
    problems = []
    for error in broken:
        folder = Path(getattr(error, "folder", root))
        problem = getattr(error, "problem", str(error))
        run = read_run(folder)
        holder = live_lock(folder)
        if run is not None and run.running:
            problem = f"training in progress (pid {run.pid}); it appears here when the run finishes"
        elif holder is not None:
            problem = f"training in progress ({holder.describe()}); it appears here when the run finishes"
        problems.append((str(folder), problem))
    return good, problems


def scan_checkpoints(roots: Sequence[Path], scan: ScanRoot = scan_root) -> FoundCheckpoints:
    """Every complete checkpoint under the roots; folders that cannot be used are listed with their problem, and
    so is a different checkpoint whose name an earlier root already has (a name is what URLs and pages use; the
    first root's folder is the one loaded); a copy of the same model under that name is no problem: it is noted as
    a copy."""
    found = FoundCheckpoints()
    first: dict[str, Path] = {}
    for root in map(Path, roots):
        if not root.is_dir():
            found.missing_roots.append(str(root))
            continue
        good, broken = scan(root)
        for info in good:
            if info.name in first and same_model(first[info.name], Path(info.path)):
                found.copies.setdefault(info.name, []).append(str(info.path))
            elif info.name in first:
                found.broken.append((str(info.path), f"same name as {first[info.name]}, which is used (the first "
                                                     "checkpoint folder listed wins)"))
            else:
                first[info.name] = Path(info.path)
                found.good.append(info)
        found.broken.extend(broken)
    return found


def default_model_names(infos: Sequence[CheckpointInfo]) -> list[str]:
    """What a new session loads: per paper model family (`models.families.SHIPPED_FAMILIES`), its full config
    (no ablation) trained under snli-small with seed 1 — the five shipped models — in the families' display
    order. The ESIM baseline and the MiniLM reference load when named (a link, the model picker): a first page
    stays the papers' five. Without any snli-small checkpoint, the full-config checkpoints of the protocol that
    has most of them."""
    full = [info for info in infos if info.config_name == info.model and (info.seed in (None, 1))
            and info.model in SHIPPED_FAMILIES]
    protocols = [info.protocol for info in full]
    if not protocols:
        return []
    chosen_protocol = DEFAULT_PROTOCOL if DEFAULT_PROTOCOL in protocols else max(set(protocols), key=protocols.count)
    picked: dict[str, CheckpointInfo] = {}
    for info in full:
        if info.protocol == chosen_protocol:
            picked.setdefault(info.model, info)
    order = sorted(picked, key=lambda m: (family_rank(m), m))
    return [picked[model].name for model in order]
