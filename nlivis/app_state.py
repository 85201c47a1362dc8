"""State the app's pages share: where checkpoints and data are, which models are loaded, training runs.

Models load once per process (`st.cache_resource`, keyed by folder and its modification time so a
retrained folder reloads); the user's choices live in `st.session_state` under non-widget keys, so
they survive page changes. Pages call these helpers and only lay out widgets.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
"""The repository (app.py, checkpoints/, configs/)."""

CHECKPOINTS_ENV = "NLIVIS_CHECKPOINTS"
"""Checkpoint folders to scan (os.pathsep-separated); default: <repository>/checkpoints."""
DATA_ENV = "NLIVIS_DATA"
"""Data root (the layout of ../shared/data); default: <repository>/../shared/data when it exists."""
PROJECTION_CACHE_ENV = "NLIVIS_PROJECTION_CACHE"
"""Where projections are cached; default: nlivis.analysis.projection's (~/.cache/nlivis/projections)."""
RUNS_ENV = "NLIVIS_RUNS"
"""Where the Train page writes new checkpoints; default: the first checkpoint folder."""

MAX_SENTENCE_CHARS = 2000
"""Longer typed sentences are cut (with a note) before analysis; models cut tokens further."""

SMALL_PROTOCOL_NOTE = ("Numbers come from models trained on reduced protocols (snli-small, mnli-small, quora-small: "
                       "a few thousand CPU-trained pairs), not the papers' training data; they are not the papers' results.")
"""Shown wherever a number is, unless a checkpoint's own protocol note is more specific."""

NOTE_ICON = ":material/info:"
"""Starts every note caption (streamlit's bundled icon font: no glyph depends on the browser's fonts)."""

_SELECTED = "nlivis_selected_checkpoints"
_EXTRA_ROOTS = "nlivis_extra_checkpoint_roots"
_DATA_ROOT = "nlivis_data_root"


# ---------------------------------------------------------------- folders

def checkpoint_roots() -> list[Path]:
    """Folders scanned for checkpoints: NLIVIS_CHECKPOINTS (or checkpoints/), NLIVIS_RUNS when set, and any the
    user added."""
    configured = os.environ.get(CHECKPOINTS_ENV)
    roots = [Path(p) for p in configured.split(os.pathsep) if p] if configured else [ROOT / "checkpoints"]
    runs = os.environ.get(RUNS_ENV)
    if runs and Path(runs).is_dir() and Path(runs) not in roots:  # finished Train-page runs show up on Home
        roots.append(Path(runs))
    for extra in st.session_state.get(_EXTRA_ROOTS, []):
        if Path(extra) not in roots:
            roots.append(Path(extra))
    return roots


def add_checkpoint_root(folder: str) -> str | None:
    """Remember a user-given folder to scan; returns an error message when it is not a folder."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder"
    extras = list(st.session_state.get(_EXTRA_ROOTS, []))
    if str(path) not in extras:
        extras.append(str(path))
    st.session_state[_EXTRA_ROOTS] = extras
    return None


def data_root() -> Path | None:
    """The data folder (user-given, NLIVIS_DATA, or ../shared/data), or None when none exists."""
    for candidate in (st.session_state.get(_DATA_ROOT), os.environ.get(DATA_ENV), ROOT.parent / "shared" / "data"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def set_data_root(folder: str) -> str | None:
    path = Path(folder).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder"
    st.session_state[_DATA_ROOT] = str(path)
    return None


def runs_root() -> Path:
    """Where new training runs go: NLIVIS_RUNS, else the first checkpoint folder."""
    configured = os.environ.get(RUNS_ENV)
    return Path(configured) if configured else checkpoint_roots()[0]


def projection_cache_dir() -> Path | None:
    configured = os.environ.get(PROJECTION_CACHE_ENV)
    return Path(configured) if configured else None


# ---------------------------------------------------------------- checkpoints

@dataclass
class FoundCheckpoints:
    """What a scan found: loadable checkpoints (CheckpointInfo) and broken folders with their error."""

    good: list[Any] = field(default_factory=list)
    broken: list[tuple[str, str]] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)


def scan_checkpoints(roots: Sequence[Path] | None = None) -> FoundCheckpoints:
    """Every complete checkpoint under the roots; folders that cannot be used are listed with their error."""
    from nlivis.training.checkpoint import find_checkpoints

    found = FoundCheckpoints()
    for root in roots if roots is not None else checkpoint_roots():
        if not Path(root).is_dir():
            found.missing_roots.append(str(root))
            continue
        broken: list[Any] = []
        found.good.extend(find_checkpoints(Path(root), broken=broken))
        for error in broken:
            folder = Path(getattr(error, "folder", root))
            problem = getattr(error, "problem", str(error))
            run = read_run(folder)
            if run is not None and run.running:
                problem = f"training in progress (pid {run.pid}); it appears here when the run finishes"
            found.broken.append((str(folder), problem))
    return found


def checkpoint_row(info: Any) -> dict[str, Any]:
    """One row of the Home table: what a checkpoint is, how it was trained and how well it did."""
    accuracy = info.dev_accuracy
    return {
        "checkpoint": info.name,
        "model": info.model,
        "config": info.config_name,
        "protocol": info.protocol,
        "size": info.size,
        "embeddings": info.embedding_source,
        "dev accuracy": f"{accuracy:.2%}" if isinstance(accuracy, (int, float)) else "—",
        "selected on": info.select_split,
        "parameters": f"{info.parameters:,}" if isinstance(info.parameters, int) else "—",
        "folder": str(info.path),
    }


def _folder_stamp(path: Path) -> float:
    """Latest modification time among the folder's files: a retrained checkpoint reloads."""
    try:
        return max((p.stat().st_mtime for p in path.iterdir() if p.is_file()), default=path.stat().st_mtime)
    except OSError:
        return 0.0


@st.cache_resource(show_spinner="loading checkpoint …", max_entries=32)
def _load_cached(path: str, stamp: float) -> Any:
    from nlivis.training.checkpoint import load_checkpoint

    loaded = load_checkpoint(Path(path))
    loaded.model.eval()
    return loaded


def load_model(path: str | Path) -> tuple[Any | None, str | None]:
    """(LoadedCheckpoint, None) or (None, the reason it could not load). Loads once per process."""
    path = Path(path)
    try:
        return _load_cached(str(path), _folder_stamp(path)), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{path}: {error}"


def selected_paths() -> list[str]:
    """Checkpoint folders the user chose to load (kept across pages)."""
    return list(st.session_state.get(_SELECTED, []))


def set_selected_paths(paths: Iterable[str]) -> None:
    st.session_state[_SELECTED] = list(dict.fromkeys(str(p) for p in paths))


@dataclass
class LoadedModel:
    """A loaded checkpoint with the short label pages show for it."""

    label: str
    path: str
    checkpoint: Any

    @property
    def model(self):
        return self.checkpoint.model

    @property
    def labels(self) -> list[str]:
        return list(self.checkpoint.labels)


def loaded_models() -> tuple[list[LoadedModel], list[str]]:
    """The selected checkpoints, loaded (cached), and the errors of those that failed."""
    models: list[LoadedModel] = []
    errors: list[str] = []
    for path in selected_paths():
        loaded, error = load_model(path)
        if error:
            errors.append(error)
        else:
            models.append(LoadedModel(label=checkpoint_label(path, loaded), path=path, checkpoint=loaded))
    return models, errors


def checkpoint_label(path: str | Path, described: Any | None = None) -> str:
    """'diin · snli-small · diin-shipped': model, protocol and folder name (from a CheckpointInfo or
    a LoadedCheckpoint; the folder name alone without either)."""
    info = getattr(described, "info", described)
    parts = (getattr(info, "model", None), getattr(info, "protocol", None), Path(path).name)
    return " · ".join(str(p) for p in parts if p)


def protocol_note(loaded: Any | None = None) -> str:
    """The protocol's own note (e.g. what snli-small trains on) or the general reduced-protocol note."""
    return protocol_note_for(getattr(getattr(loaded, "info", None), "protocol", None))


def protocol_note_for(name: str | None) -> str:
    """The note of the protocol called `name` (a checkpoint's recorded protocol), or the general note."""
    if name:
        try:
            from nlivis.data.protocols import get_protocol

            protocol = get_protocol(str(name))
            if protocol.note:
                return f"Protocol {protocol.name}: {protocol.note}"
        except (ImportError, ValueError, KeyError):
            pass
    return SMALL_PROTOCOL_NOTE


def show_protocol_notes(models: Sequence[LoadedModel]) -> None:
    """One caption per distinct protocol among the models shown (or the general note)."""
    notes = list(dict.fromkeys(protocol_note(m.checkpoint) for m in models)) or [SMALL_PROTOCOL_NOTE]
    for note in notes:
        st.caption(f"{NOTE_ICON} {note}")


def percent_columns(columns: Iterable[str]) -> dict[str, Any]:
    """`st.dataframe(column_config=...)` showing the given 0–1 columns as percentages."""
    return {column: st.column_config.NumberColumn(format="percent") for column in columns}


def require_models(view: str) -> list[LoadedModel]:
    """The loaded models, or stop the page with a message saying how to load one."""
    models, errors = loaded_models()
    for error in errors:
        st.error(f"Could not load {error}")
    if not models:
        st.info(f"No model is loaded. Choose checkpoints on the Home page to use the {view}.")
        st.page_link("app.py", label="Go to Home", icon="🏠")
        st.stop()
    return models


def clean_sentence(text: str) -> tuple[str, str | None]:
    """Strip and cut a typed sentence; returns (text, a note when it was cut)."""
    text = " ".join((text or "").split())
    if len(text) > MAX_SENTENCE_CHARS:
        return text[:MAX_SENTENCE_CHARS], f"the sentence was cut to its first {MAX_SENTENCE_CHARS} characters"
    return text, None


# ---------------------------------------------------------------- training runs (separate processes)

RUNS_FOLDER = ".runs"
"""Next to the checkpoints: `.runs/<name>/` keeps each run's lock and log. Not inside the run's own
folder, because the trainer replaces that folder atomically when it writes the finished checkpoint."""
LOCK_FILE = "run.lock.json"
"""{"pid", "started", "command", "out"}: lets a refreshed page find a live run instead of starting another."""
STOP_FILE = "STOP"
"""Written into the run's output folder by the Stop button; the trainer stops after its current step."""
LOG_FILE = "train.log"


@dataclass
class TrainingRun:
    out: Path
    pid: int | None
    started: float | None
    command: list[str]
    running: bool


def run_record_folder(out: Path) -> Path:
    return Path(out).parent / RUNS_FOLDER / Path(out).name


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a finished child of this process stays a zombie until reaped
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def read_run(out: Path) -> TrainingRun | None:
    """The run recorded for output folder `out`, or None when it was not started from the app."""
    lock = run_record_folder(out) / LOCK_FILE
    if not lock.is_file():
        return None
    try:
        record = json.loads(lock.read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return TrainingRun(Path(out), None, None, [], False)
    return TrainingRun(Path(out), pid, record.get("started"), list(record.get("command", [])), _pid_alive(pid))


def find_runs(root: Path) -> list[TrainingRun]:
    """Runs (live or finished) started from the app under checkpoint folder `root`, newest first."""
    records = Path(root) / RUNS_FOLDER
    if not records.is_dir():
        return []
    runs = [run for folder in records.iterdir() if folder.is_dir() and (run := read_run(Path(root) / folder.name)) is not None]
    return sorted(runs, key=lambda r: r.started or 0.0, reverse=True)


TRAINING_DATASETS = ("snli-small", "mnli-small", "quora-small", "snli", "mnli", "quora")
"""What the Train page offers: the reduced protocols (read from the data root) and the full datasets (read
from the dataset's own folder)."""


def default_training_folder(dataset: str) -> Path | None:
    """Where a run reads `dataset` by default: the data root for a reduced protocol, `<data root>/<dataset>`
    for a full dataset (None when there is no data root)."""
    root = data_root()
    if root is None:
        return None
    return root if dataset.endswith("-small") else root / dataset


def training_device() -> str:
    """Where a training run started from the app computes: the GPU when torch sees one, else the CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def train_command(config: str, dataset: str, data_dir: Path, out: Path, size: str = "shipped",
                  embeddings: str | None = None, epochs: float | None = None, max_steps: int | None = None,
                  seed: int = 1, device: str = "cpu") -> list[str]:
    """The `python -m nlivis train …` command line the Train page runs (the same as on a terminal)."""
    command = [sys.executable, "-m", "nlivis", "train", "--config", config, "--dataset", dataset,
               "--data-dir", str(Path(data_dir).expanduser().resolve()), "--out", str(Path(out).expanduser().resolve()),
               "--size", size, "--seed", str(seed), "--device", device]
    if embeddings:
        command += ["--embeddings", embeddings]
    if epochs is not None:
        command += ["--epochs", str(epochs)]
    if max_steps is not None:
        command += ["--max-steps", str(max_steps)]
    return command


def resume_command(run: TrainingRun) -> list[str]:
    """The run's own recorded command with --resume: a resumed run must rebuild the same model and data,
    whatever the Train page's widgets say now."""
    return list(run.command) + ([] if "--resume" in run.command else ["--resume"])


def run_name(config: str, dataset: str, seed: int) -> str:
    """The folder name a run gets by default, as the shipped checkpoints are named (`gcnn-snli-small-seed2`)."""
    return f"{config}-{dataset}" + ("" if seed == 1 else f"-seed{seed}")


RunStatus = Literal["running", "finished", "stopped", "failed"]


def run_status(run: TrainingRun) -> RunStatus:
    """running: the worker lives; finished: the checkpoint is complete; stopped: the worker is gone but
    left its training state (Stop, or killed), so it can resume; failed: neither (see its log)."""
    from nlivis.training.checkpoint import MANIFEST, STATE_FOLDER

    if run.running:
        return "running"
    if (Path(run.out) / MANIFEST).is_file():
        return "finished"
    if (Path(run.out) / STATE_FOLDER / "state.json").is_file():
        return "stopped"
    return "failed"


FOREIGN_RUN_IDLE_S = 300.0
"""A folder whose metrics.jsonl changed this recently, with no run record of the app, is taken to be in use
by a training process started elsewhere (a terminal, scripts/train_shipped.py): the app starts nothing in it."""


def out_folder_problem(out: Path) -> str | None:
    """Why a new run cannot write to `out` (another live run, a complete checkpoint, the saved state of an
    unfinished run, a folder another process is writing), or None."""
    from nlivis.training.checkpoint import MANIFEST, STATE_FOLDER

    run = read_run(out)
    if run is not None and run.running:
        return f"a training run (pid {run.pid}) is already writing to {out}"
    if (Path(out) / MANIFEST).is_file():
        return f"{out} already holds a finished checkpoint; choose another run name"
    log = Path(out) / "metrics.jsonl"
    idle = time.time() - log.stat().st_mtime if log.is_file() else None
    if run is None and idle is not None and idle < FOREIGN_RUN_IDLE_S:
        return (f"{out} was written to {idle:.0f} s ago by a training process not started here "
                "(e.g. scripts/train_shipped.py); choose another run name")
    if (Path(out) / STATE_FOLDER).exists():
        return (f"{out} holds the saved state of an unfinished run: resume it under Runs below (or with --resume on "
                "its command line), or choose another run name")
    return None


def training_data_problem(dataset: str, data_dir: Path | None) -> str | None:
    """Why `dataset` (a protocol or dataset name) cannot train from `data_dir` (missing splits named), or None."""
    from nlivis.data.protocols import get_protocol, require_training_splits

    if data_dir is None:
        return "no data folder: set one on the Home page (layout of ../shared/data) or type the dataset's folder"
    try:
        require_training_splits(get_protocol(dataset), data_dir)
    except (ValueError, FileNotFoundError) as error:
        return str(error)
    return None


def embeddings_problem(source: str | None) -> str | None:
    """Why an embedding source cannot be used on this machine (GloVe file or MiniLM package missing), or None."""
    if not source or source == "random":
        return None
    if source == "minilm":
        from nlivis.features.embeddings import EmbeddingSourceError, minilm_folder

        try:
            minilm_folder()
        except EmbeddingSourceError as error:
            return str(error)
        return None
    if source.startswith("glove:"):
        path = Path(source[len("glove:"):].split("#", 1)[0]).expanduser()
        path = path if path.is_absolute() else ROOT / path
        return None if path.is_file() else f"GloVe file {path} not found (give its path as glove:PATH)"
    return f"unknown embedding source {source!r}; use random, minilm or glove:PATH"


def start_run(command: list[str], out: Path) -> TrainingRun:
    """Start a worker process for `command` writing into `out`; refuses while a live run owns `out`."""
    existing = read_run(out)
    if existing is not None and existing.running:
        raise RuntimeError(f"a training run (pid {existing.pid}) is already writing to {out}")
    records = run_record_folder(out)
    records.mkdir(parents=True, exist_ok=True)
    (Path(out) / STOP_FILE).unlink(missing_ok=True)
    with open(records / LOG_FILE, "ab") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    started = time.time()
    (records / LOCK_FILE).write_text(json.dumps({"pid": process.pid, "started": started, "command": command,
                                                 "out": str(out)}), encoding="utf-8")
    return TrainingRun(Path(out), process.pid, started, command, True)


def request_stop(run: TrainingRun) -> None:
    """Write the STOP file: the trainer finishes its step, saves the best weights, and exits."""
    Path(run.out).mkdir(parents=True, exist_ok=True)
    (Path(run.out) / STOP_FILE).write_text("stop requested from the app\n", encoding="utf-8")


def read_run_metrics(out: Path) -> list[dict]:
    """Lines of the run's metrics.jsonl written so far (the trainer's own reader; half-written lines skipped)."""
    from nlivis.training.metrics import read_metrics_log

    return read_metrics_log(Path(out) / "metrics.jsonl")


def run_summary(records: Sequence[dict]) -> dict[str, Any]:
    """The latest numbers of a run's metrics.jsonl: step, epoch, loss, train and best dev accuracy, pairs/s
    (the last logged window and the median over all windows). Absent keys were not logged yet."""
    summary: dict[str, Any] = {}
    speeds = []
    for record in records:
        for key in ("step", "epoch", "loss", "train_acc", "best_dev_acc", "pairs_per_s"):
            if isinstance(record.get(key), (int, float)):
                summary[key] = record[key]
        if isinstance(record.get("pairs_per_s"), (int, float)):
            speeds.append(float(record["pairs_per_s"]))
    if speeds:
        summary["median_pairs_per_s"] = sorted(speeds)[len(speeds) // 2]
    return summary


def training_configs() -> tuple[dict[str, dict[str, Any]], str | None]:
    """Every config in configs/ by name (nlivis.training.config.all_configs), or ({}, why they cannot be read)."""
    from nlivis.training.config import all_configs

    try:
        return all_configs(), None
    except (OSError, ValueError) as error:
        return {}, f"the configs cannot be read: {error}"


def log_tail(out: Path, lines: int = 20) -> str:
    """The last lines the worker printed (its stdout and stderr)."""
    path = run_record_folder(out) / LOG_FILE
    if not path.is_file():
        return ""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


# ---------------------------------------------------------------- data splits

def local_splits() -> dict[str, Any]:
    """Split key (e.g. "snli_dev") → SplitRef for every split of the reduced protocols found under the
    data root; empty when there is no data folder."""
    root = data_root()
    if root is None:
        return {}
    from nlivis.data.protocols import PROTOCOLS, all_protocol_refs, find_split_file, split_key

    found: dict[str, Any] = {}
    for protocol in PROTOCOLS.values():
        if not protocol.small:
            continue
        for ref in all_protocol_refs(protocol):
            if find_split_file(ref, root) is not None:
                found.setdefault(split_key(ref), ref)
    return found


@st.cache_resource(show_spinner="reading the split …", max_entries=8)
def _read_split_cached(ref: Any, root: str) -> Any:
    from nlivis.data.protocols import read_split

    return read_split(ref, root)


def read_local_split(key: str) -> tuple[list[Any], str | None]:
    """(pairs, None) for a split found by `local_splits`, or ([], why it could not be read).
    Cached as a resource (kept in memory, never pickled)."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return [], f"split {key!r} is not in the data folder ({root})"
    try:
        return list(_read_split_cached(splits[key], str(root)).pairs), None
    except (OSError, ValueError) as error:
        return [], str(error)


# ---------------------------------------------------------------- figures

_IMAGE_FORMAT = "nlivis_image_format"


def image_format_choice() -> None:
    """Sidebar radio: which format the plotly camera button saves (kept across pages)."""
    formats = ["svg", "png"]
    current = st.session_state.get(_IMAGE_FORMAT, "svg")
    chosen = st.sidebar.radio("Figure download format (camera button)", formats, index=formats.index(current),
                              horizontal=True, key=f"{_IMAGE_FORMAT}_widget")
    st.session_state[_IMAGE_FORMAT] = chosen


def show_figure(figure: Any, key: str, filename: str | None = None) -> None:
    """A plotly figure with its camera button (SVG or PNG) and a CSV download of the data behind it."""
    from nlivis.viz import figure_data_csv, plotly_config

    name = filename or key
    st.plotly_chart(figure, config=plotly_config(st.session_state.get(_IMAGE_FORMAT, "svg"), name), key=f"chart_{key}",
                    width="stretch")
    st.download_button("data (CSV)", figure_data_csv(figure), file_name=f"{name}.csv", mime="text/csv",
                       key=f"csv_{key}", help="the numbers drawn in this figure")


# ---------------------------------------------------------------- one pair through the models

_PAIR = "nlivis_current_pair"
_RESULTS = "nlivis_pair_results"
DEFAULT_PAIR = {"premise": "A man is playing a guitar on a stage .", "hypothesis": "A person is making music .",
                "gold": None, "source": "typed"}
"""The pair a page starts with before the user types or picks one."""


def current_pair() -> dict[str, Any]:
    """The pair the user last entered on any page (premise, hypothesis, gold label or None, source)."""
    return dict(st.session_state.get(_PAIR, DEFAULT_PAIR))


def pair_input(prefix: str) -> dict[str, Any]:
    """Widgets to type a pair or pick one from a local dataset split; the choice is shared by all pages."""
    pair = current_pair()
    sources = ["type a pair", "pick from a dataset split"]
    source = st.radio("Pair", sources, horizontal=True, key=f"{prefix}_source",
                      index=1 if pair.get("source", "typed") != "typed" else 0)
    if source == sources[0]:
        left, right = st.columns(2)
        premise = left.text_area("Premise", value=pair["premise"], key=f"{prefix}_premise", height=90)
        hypothesis = right.text_area("Hypothesis", value=pair["hypothesis"], key=f"{prefix}_hypothesis", height=90)
        pair = {"premise": premise, "hypothesis": hypothesis, "gold": None, "source": "typed"}
    else:
        splits = local_splits()
        if not splits:
            st.info("No dataset split found: set a data folder on the Home page (layout of ../shared/data) to pick pairs.")
        else:
            keys = list(splits)
            left, right = st.columns([2, 1])
            split = left.selectbox("Split", keys, key=f"{prefix}_split",
                                   index=keys.index(pair["source"]) if pair.get("source") in keys else 0)
            pairs, error = read_local_split(split)
            if error:
                st.error(error)
            elif pairs:
                number = right.number_input(f"Pair number (0–{len(pairs) - 1})", min_value=0, max_value=len(pairs) - 1,
                                            value=min(int(pair.get("number", 0)), len(pairs) - 1), step=1, key=f"{prefix}_number")
                chosen = pairs[int(number)]
                pair = {"premise": chosen.premise, "hypothesis": chosen.hypothesis, "gold": chosen.label,
                        "source": split, "number": int(number), "id": chosen.id, "genre": chosen.genre}
                st.markdown(f"**Premise:** {chosen.premise}  \n**Hypothesis:** {chosen.hypothesis}  \n"
                            f"**Gold:** {chosen.label}" + (f" · genre {chosen.genre}" if chosen.genre else ""))
    st.session_state[_PAIR] = pair
    return pair


@dataclass
class PairResult:
    """One model's reading of one pair: tokens as the model saw them, probabilities and the trace."""

    model_label: str
    premise: str
    hypothesis: str
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    labels: list[str]
    probs: list[float]
    trace: Any
    notices: list[str] = field(default_factory=list)
    """What the user should know about how the pair was read (cut-offs, unknown words)."""

    @property
    def predicted(self) -> str:
        return self.labels[max(range(len(self.probs)), key=self.probs.__getitem__)]


@st.cache_resource(max_entries=256, show_spinner=False)
def _analyse_cached(path: str, stamp: float, premise: str, hypothesis: str) -> PairResult:
    from nlivis.training.commands import predict_pairs

    loaded = _load_cached(path, stamp)
    prediction = predict_pairs(loaded, premise, hypothesis, trace=True)
    labels = list(loaded.labels)
    return PairResult(checkpoint_label(path, loaded), premise, hypothesis, list(prediction.premise_tokens),
                      list(prediction.hypothesis_tokens), labels, [float(prediction.probabilities[l]) for l in labels],
                      prediction.trace.detach(), list(prediction.notices))


def analyse_pair(model: LoadedModel, premise: str, hypothesis: str) -> tuple[PairResult | None, str | None]:
    """(result, None) or (None, why the model could not read the pair), e.g. an empty sentence."""
    premise, _ = clean_sentence(premise)
    hypothesis, _ = clean_sentence(hypothesis)
    try:
        return _analyse_cached(model.path, _folder_stamp(Path(model.path)), premise, hypothesis), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # a model failing on one input must not take the page down
        return None, f"{model.label} could not read this pair ({type(error).__name__}: {error})"


def remember_results(results: dict[str, PairResult]) -> dict[str, PairResult] | None:
    """Keep the last two distinct pairs' results; returns the previous pair's results (or None)."""
    history: list[dict[str, PairResult]] = st.session_state.get(_RESULTS, [])
    key = lambda rs: next(((r.premise, r.hypothesis) for r in rs.values()), None)  # noqa: E731
    if history and key(history[-1]) == key(results):
        history[-1] = results
    else:
        history = (history + [results])[-2:]
    st.session_state[_RESULTS] = history
    return history[0] if len(history) == 2 else None


@st.cache_resource(max_entries=8, show_spinner="analysing a sample of the split with spaCy …")
def _analysed_sample_cached(ref: Any, root: str, size: int, seed: int) -> list[Any]:
    import random

    from nlivis.features.dataset import analyze_pairs

    pairs = list(_read_split_cached(ref, root).pairs)
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    return analyze_pairs([pairs[i] for i in chosen], progress=False)


def analysed_sample(key: str, size: int, seed: int = 0) -> tuple[list[Any], str | None]:
    """A fixed random sample (by seed) of `size` pairs of a local split, analysed with spaCy (cached)."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return [], f"split {key!r} is not in the data folder ({root})"
    try:
        return _analysed_sample_cached(splits[key], str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return [], str(error)


def encoded_batches(model: LoadedModel, items: Sequence[Any], batch_size: int = 32) -> list[Any]:
    """The items as the model's featurizer encodes them, in batches of `batch_size`."""
    featurizer = model.checkpoint.featurizer
    return [featurizer.encode(items[i:i + batch_size]) for i in range(0, len(items), batch_size)]


# ---------------------------------------------------------------- predictions and tags for error analysis

def prediction_splits(model: LoadedModel) -> dict[str, Path]:
    """Split key → predictions file written with the checkpoint (e.g. "snli_dev")."""
    from nlivis.analysis.predictions import find_prediction_files

    return find_prediction_files(model.path)


@st.cache_resource(max_entries=256, show_spinner=False)
def _predictions_cached(path: str, stamp: float) -> list[Any]:
    from nlivis.analysis.predictions import read_predictions

    return read_predictions(path)


def checkpoint_predictions(folder: str | Path, key: str) -> tuple[list[Any], str | None]:
    """(predictions, None) for one split of a checkpoint folder (its weights are not loaded), or ([], why not)."""
    from nlivis.analysis.predictions import find_prediction_files

    path = find_prediction_files(folder).get(key)
    if path is None:
        return [], f"{Path(folder).name} has no predictions for {key}"
    try:
        return _predictions_cached(str(path), path.stat().st_mtime), None
    except (OSError, ValueError) as error:
        return [], str(error)


def model_predictions(model: LoadedModel, key: str) -> tuple[list[Any], str | None]:
    """(predictions, None) for one split, or ([], why they cannot be read)."""
    return checkpoint_predictions(model.path, key)


# ---------------------------------------------------------------- ablations (checkpoints of one family)

def variant_records() -> tuple[list[Any], list[str]]:
    """A VariantRecord (nlivis.analysis.ablations) for every complete checkpoint found, and the folders
    whose JSON files could not be read (with why)."""
    from nlivis.analysis.ablations import read_variant

    records, problems = [], []
    for info in scan_checkpoints().good:
        try:
            records.append(read_variant(info.path))
        except ValueError as error:
            problems.append(str(error))
    return records, problems


def family_predictions(members: Sequence[Any], reference: Any, split: str) -> tuple[list[Any], dict[str, list[Any]], list[str]]:
    """(the reference's predictions on `split`, {other member: its predictions}, problems): members without
    predictions for the split are left out; unreadable files are problems, as is a reference without them."""
    reference_predictions, error = checkpoint_predictions(reference.folder, split)
    problems = [error] if error else []
    variants: dict[str, list[Any]] = {}
    for member in members:
        if member.name == reference.name or split not in member.prediction_splits:
            continue
        predictions, member_error = checkpoint_predictions(member.folder, split)
        if member_error:
            problems.append(member_error)
        else:
            variants[member.name] = predictions
    return reference_predictions, variants, problems


def measure_seed_noise(seeds: Sequence[Any], split: str) -> tuple[Any | None, str | None]:
    """(SeedNoise between the first two seeds of the full model on `split`, None), or (None, why it cannot be
    measured: one seed only, no predictions for the split, or predictions that are not of the same split)."""
    from nlivis.analysis.ablations import seed_noise

    if len(seeds) < 2:
        return None, "one seed only"
    first, second = seeds[0], seeds[1]
    first_predictions, first_error = checkpoint_predictions(first.folder, split)
    second_predictions, second_error = checkpoint_predictions(second.folder, split)
    if first_error or second_error:
        return None, first_error or second_error
    try:
        return seed_noise(first_predictions, second_predictions, first.name, second.name), None
    except ValueError as error:
        return None, f"{first.name} and {second.name}: {error}"


@dataclass
class TaggedSample:
    """Automatic annotation tags for a sample of a split's pairs (pair id → tags) and the pairs by id."""

    tags: dict[str, frozenset[str]]
    pairs: dict[str, Any]
    unavailable: dict[str, str]


@st.cache_resource(max_entries=8, show_spinner="tagging pairs (spaCy parse) …")
def _tagged_sample_cached(ref: Any, root: str, size: int, seed: int) -> TaggedSample:
    import random
    import warnings

    from nlivis.analysis.tags import tag_pairs, unavailable_tags

    pairs = list(_read_split_cached(ref, root).pairs)
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), min(size, len(pairs))))
    sample = [pairs[i] for i in chosen]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-WordNet warning is shown through `unavailable`
        tags = tag_pairs(sample)
    return TaggedSample(dict(tags), {p.id: p for p in pairs}, unavailable_tags())


def tagged_sample(key: str, size: int, seed: int = 0) -> tuple[TaggedSample | None, str | None]:
    """Tags for a fixed random sample of `size` pairs of a local split (cached), or why there are none."""
    splits = local_splits()
    root = data_root()
    if key not in splits or root is None:
        return None, f"the pairs of {key} are not in the data folder ({root or 'none found'}), so they cannot be tagged"
    try:
        return _tagged_sample_cached(splits[key], str(root), int(size), int(seed)), None
    except (OSError, ValueError) as error:
        return None, str(error)


def split_size(key: str) -> int | None:
    """Pairs in a local split, or None when it is not local."""
    pairs, error = read_local_split(key)
    return None if error else len(pairs)


def predict_items(model: LoadedModel, items: Sequence[Any]) -> list[str]:
    """The model's predicted label for each analysed pair, in order (batched by length, no tracing)."""
    import torch

    from nlivis.training.trainer import predict_probabilities

    probabilities = predict_probabilities(model.model, model.checkpoint.featurizer, items, 64, torch.device("cpu"))
    return [model.labels[i] for i in probabilities.argmax(dim=-1).tolist()]
