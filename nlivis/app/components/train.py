"""Train: start a training run in a worker process, watch its curves live, stop or resume it; in a second tab,
judge a changed checkpoint against its control (`components.augment_report`).

The run is a separate `python -m nlivis train` process recorded next to the checkpoints, so closing or refreshing
the browser neither stops it nor starts it twice: the page finds it again from its folder."""
from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from nlivis.app import cache, paths, state
from nlivis.app.components import augment_report, controls, figures
from nlivis.app.components.frame import NOTE_ICON
from nlivis.app.text import code, md
from nlivis.training import runs as training_runs
from nlivis.data.options import exclusive_twins_problem
from nlivis.training.augment import DEFAULT_AUGMENT_RATIO, DEFAULT_NEGATED_SHARE, augment_choices
from nlivis.store.files import file_stamp
from nlivis.training.config import CONFIG_DIR, SIZES, apply_size
from nlivis.training.progress import ENDED, RunProgress
from nlivis.training.run_folder import STOP_FILE, run_name_problem
from nlivis.viz.vega.curves import training_curves

PAGE = "train"
POLL_SECONDS = 2.0
"""How often a live run's curves and log are re-read."""
VIEWS = ("Start and watch runs", "Before and after")
"""The page's tabs (`tab=` in the URL): runs, and a changed checkpoint judged against its control."""


def page() -> None:
    """The open tab only: the start form and the runs, or the before → after report (`components.augment_report`)."""
    view, containers = controls.tabs(PAGE, "tab", VIEWS)
    with containers[VIEWS.index(view)]:
        if view == VIEWS[0]:
            start_form()
            runs()
        else:
            augment_report.section(PAGE)


def start_form() -> None:
    """The form that starts a run: config, size, data, word vectors, length, augmentation, name; then Start."""
    root = paths.runs_root()
    device = training_runs.training_device()
    configs = available_configs()
    st.subheader("Start a run")
    st.caption(f"Writes a checkpoint folder under **{md(root)}** (your runs folder, outside the code; set NLIVIS\\_RUNS "
               f"to change it; Home lists what finishes there) · computes on **{md(device)}**"
               + (" (no GPU found)" if device == "cpu" else ""))
    names = list(configs)
    left, middle, right = st.columns(3)
    config_name = controls.select(PAGE, "config", "Config", names, "gcnn" if "gcnn" in names else names[0], where=left)
    config = configs[config_name]
    sizes = [s for s in SIZES if s != "shipped" or "shipped" in config]
    size = middle.radio("Size", sizes, index=len(sizes) - 1, horizontal=True, key=f"train_size_{config_name}",
                        help="paper: the config as the paper sets it; shipped: its reduced CPU size (the shipped checkpoints)")
    dataset = controls.select(PAGE, "dataset", "Dataset / protocol", training_runs.TRAINING_DATASETS, where=right,
                              help="-small: the reduced protocols over the data root; snli, mnli, quora: the full datasets")
    resolved = apply_size(config, size)
    data_folder = data_folder_input(dataset)
    vectors_column, seed_column, epochs_column, steps_column = st.columns(4)
    default_embeddings = str(resolved.get("features", {}).get("embeddings", "random"))
    embeddings = embeddings_input(vectors_column, default_embeddings)
    seed = int(seed_column.number_input("Seed", min_value=1, max_value=10_000, value=1, step=1, key="train_seed"))
    config_epochs = float(resolved.get("training", {}).get("epochs", 1))
    epochs = epochs_column.number_input("Epochs", min_value=0.01, max_value=1000.0, value=config_epochs, step=1.0,
                                        key=f"train_epochs_{config_name}_{size}")
    max_steps = int(steps_column.number_input("Max steps (0: no limit)", min_value=0, value=0, step=10,
                                              key="train_max_steps",
                                              help="the run stops at whichever of epochs and steps comes first"))
    kinds, ratio, negated_share, exclusive_twins = augmentation_inputs()
    default_name = training_runs.free_run_name(config_name, dataset, seed, [root, *paths.checkpoint_roots()])
    name_key = f"train_name_{config_name}_{dataset}_{seed}"
    offer_free_name(name_key, default_name)
    name = st.text_input("Run name (checkpoint folder)", key=name_key).strip()
    out = root / name
    problems = [p for p in (training_runs.training_data_problem(dataset, data_folder),
                            training_runs.embeddings_problem(embeddings or default_embeddings),
                            run_name_problem(name) or training_runs.out_folder_problem(out)) if p]
    for problem in problems:
        st.warning(f"Cannot start: {md(problem)}")
    if note := training_runs.embeddings_note(embeddings or default_embeddings):
        st.caption(f"{NOTE_ICON} {md(note)}")
    options = dict(size=size, embeddings=embeddings, epochs=None if epochs == config_epochs else float(epochs),
                   max_steps=max_steps or None, seed=seed, device=device, augment=kinds,
                   augment_ratio=ratio if kinds else None, augment_negated_share=negated_share if kinds else None,
                   augment_exclusive_twins=exclusive_twins)
    command = None if problems else training_runs.train_command(config_name, dataset, data_folder or Path("DATA"), out,
                                                                 **options)
    start_button(command, out, data_folder is not None)


def offer_free_name(name_key: str, default_name: str) -> None:
    """The run-name field holds the free default until the reader types another name; once the name it offered is
    taken (the run just started owns it, or finished under it) it offers the next free one. Removing the field's
    state did not do that: the browser sent the old name back, and Start was refused ("already holds a finished
    checkpoint")."""
    offered_key = f"{name_key}_offered"
    offered = st.session_state.get(offered_key)
    if name_key not in st.session_state or (st.session_state[name_key] == offered and offered != default_name):
        st.session_state[name_key] = default_name  # set before the field is drawn: the browser shows it
    st.session_state[offered_key] = default_name


def available_configs() -> dict[str, dict]:
    """Every config in configs/ by name; the page stops with a message when they cannot be read or there is none.
    They are read once per state of the folder's files (`cache.memo`: parsing and checking every TOML file was
    nine tenths of a warm Train run's script, bench/page_script_time.py); shared, never modified here."""
    stamps = repr(sorted((path.name, file_stamp(path)) for path in CONFIG_DIR.glob("*.toml")))
    configs, config_error = cache.memo("training configs", (str(CONFIG_DIR), stamps), training_runs.training_configs)
    if config_error:
        st.error(md(config_error))
        state.stop()
    if not configs:
        st.info("No config found in configs/: nothing to train.")
        state.stop()
    return configs


def data_folder_input(dataset: str) -> Path | None:
    """The folder the run reads: the data root for a -small protocol, a typed folder for a full dataset."""
    default_folder = training_runs.default_training_folder(dataset, paths.data_root())
    if dataset.endswith("-small"):
        st.caption(f"data root: {md(default_folder)}" if default_folder else "no data root found")
        return default_folder
    typed = st.text_input(f"Folder holding the {dataset} files", value=str(default_folder or ""),
                          key=f"train_folder_{dataset}")
    return Path(typed).expanduser() if typed.strip() else None


def embeddings_input(column, default_embeddings: str) -> str | None:
    """`train --embeddings`: None keeps the config's, or minilm, random, glove:<file>."""
    choice = column.selectbox("Word vectors", [f"config's ({default_embeddings})", "minilm", "random", "GloVe file"],
                              key="train_embeddings")
    if choice == "GloVe file":
        glove = column.text_input("GloVe file", key="train_glove", placeholder="/path/to/glove.840B.300d.txt")
        return f"glove:{glove.strip()}" if glove.strip() else None
    return choice if choice in ("minilm", "random") else None


def start_button(command: list[str] | None, out: Path, has_data: bool) -> None:
    """Start training and the command line; disabled, without a command, while a problem stands in the way."""
    if st.button("Start training", type="primary", disabled=command is None, key="train_start") and command and has_data:
        try:
            training_runs.start_run(command, out)
        except (RuntimeError, OSError) as error:
            st.error(f"Could not start the run: {md(error)}")
        else:
            st.session_state[state.widget_key(PAGE, "run")] = str(out)
            st.rerun()  # the form then offers the next free name (`offer_free_name`)
    if command is not None:
        # a code span, not st.code: the highlighter st.code loads held every element of the page back ~0.5 s in a
        # new tab (bench/RESULTS.md, session 38)
        with st.expander("Command line"):
            st.markdown(code(" ".join(command)))


def augmentation_inputs() -> tuple[list[str], float, float, bool]:
    """The targeted-augmentation choice (`train --augment KIND[,KIND…] --augment-ratio R --augment-negated-share S
    [--augment-exclusive-twins]`): the kinds of label-fixed edits to add to every epoch, how many per training pair,
    the share drawn from the negated copies with their twins and whether those hold exclusive-object twins; no kind =
    no augmentation."""
    choices = dict(augment_choices())
    kinds_column, ratio_column, share_column = st.columns([3, 1, 1])
    kinds = kinds_column.multiselect(
        "Augment with label-fixed edits (optional)", list(choices), default=[], key="train_augment",
        format_func=lambda kind: kind,
        help="Edits of the training pairs made by the edit engine, added to every epoch; only edits whose label "
             "logic fixes, never a guessed label. Judge the run on held-out files and the behavioural suite's "
             "*independent* tests: its *engine* tests are built by the same engine and lexicons, so they grade the "
             "model on its own generator. " + " · ".join(f"**{k}**: {md(v)}" for k, v in choices.items()))
    ratio = float(ratio_column.number_input(
        "Augmented pairs per training pair", min_value=0.01, max_value=10.0, value=DEFAULT_AUGMENT_RATIO, step=0.1,
        key="train_augment_ratio", disabled=not kinds,
        help="at most this many augmented pairs per training pair, shared evenly among the labels and kinds; "
             "an epoch grows by as many pairs (fewer when the kinds have fewer candidates)"))
    negated_share = float(share_column.number_input(
        "Share from negated copies", min_value=0.0, max_value=1.0, value=DEFAULT_NEGATED_SHARE, step=0.1,
        key="train_augment_negated_share", disabled=not kinds,
        help="the share of each label's augmented pairs taken from the premises' negated copies paired with "
             "themselves ('A man is not driving a car' / '… a jeep'), each with its unnegated twin ('A man is "
             "driving a car' / '… a jeep'), so that only the negation decides a hypernym's or hyponym's label; "
             "needs the hypernym or hyponym kind, and number for the contradictions"))
    offered = exclusive_twins_problem(kinds, negated_share) is None
    exclusive_twins = share_column.checkbox(
        "Exclusive-object twins", value=False, key="train_augment_exclusive_twins", disabled=not offered,
        help="with a share from negated copies: the twins also hold the negated verb's object swapped for an "
             "exclusive one, neutral under the negation ('A man is not playing a guitar' / '… a violin') and a "
             "contradiction without it; needs the exclusive kind")
    return kinds, ratio, negated_share, offered and exclusive_twins


def runs() -> None:
    root = paths.runs_root()
    st.subheader("Runs")
    found = training_runs.find_runs(root)
    if not found:
        st.info(f"No run has been started from the app under {md(root)} yet.")
        state.stop()
    statuses = {str(run.out): training_runs.run_status(run) for run in found}
    live = [str(run.out) for run in found if statuses[str(run.out)] == "running"]
    if len(live) > 1:
        st.warning(f"{len(live)} runs are training at once; they share this machine's "
                   f"{md(training_runs.training_device().upper())}.")
    choices = [str(run.out) for run in found]

    def run_label(path: str) -> str:
        """The run's folder and start time (its status is shown below: a label that changes would not refresh)."""
        run = next(r for r in found if str(r.out) == path)
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.started)) if run.started else "?"
        return f"{Path(path).name} · started {started}"

    picked = controls.select(PAGE, "run", "Run", choices, live[0] if live else choices[0], format_func=run_label)
    st.fragment(show_run, run_every=POLL_SECONDS if statuses[picked] == "running" else None)(picked, statuses[picked])


def show_run(out_path: str, drawn_status: str) -> None:
    """Status, numbers, curves and log of one run; re-run on a timer while the run lives, and the whole page once
    its status differs from `drawn_status` (the one the run list shows)."""
    run = training_runs.read_run(Path(out_path))
    if run is None:
        st.info(f"{md(out_path)} has no run record.")
        return
    status = training_runs.run_status(run)
    if status != drawn_status:  # the run ended since the page was drawn: refresh the list and the start form
        st.rerun(scope="app")
    records = training_runs.read_run_metrics(Path(out_path))
    progress = training_runs.run_progress(Path(out_path))
    if status == "running" and progress is not None and progress.phase in ENDED:
        progress = None  # an earlier process's last word: this one (a resume) has not said anything yet
    run_numbers(status, training_runs.run_summary(records), progress)
    if status == "running":
        live_status(run, progress)
    if records:
        figures.show(training_curves(records), f"train_curves_{run.out.name}", f"training_{run.out.name}")
    elif status == "running":
        st.caption("No metrics logged yet: the first point comes after the first logging interval of training steps.")
    if status != "running":
        ended_status(run, status, progress)
    tail = training_runs.log_tail(Path(out_path), lines=15)
    with st.expander("Worker log (last lines)", expanded=status == "failed"):
        st.text(tail or "(empty)")
    if run.command:
        st.caption("command: " + md(" ".join(run.command)))


def run_numbers(status: str, summary: dict, progress: RunProgress | None) -> None:
    """The row of numbers: status (with the phase while running), step, epoch, loss, best dev accuracy, pairs/s."""
    step = summary.get("step")
    if progress is not None and progress.step is not None and (step is None or progress.step > step):
        step = progress.step  # the progress file counts steps every second; metrics.jsonl every logging interval
    shown_status = f"{status} · {progress.phase}" if status == "running" and progress is not None else status
    columns = st.columns([1.3, 1, 1, 1, 1.3, 1])
    columns[0].metric("status", shown_status)
    columns[1].metric("step", f"{step:,}" if step is not None else "—")
    columns[2].metric("epoch", f"{summary['epoch']:.2f}" if "epoch" in summary else "—")
    columns[3].metric("loss", f"{summary['loss']:.3f}" if "loss" in summary else "—")
    columns[4].metric("best dev accuracy", f"{summary['best_dev_acc']:.1%}" if "best_dev_acc" in summary else "—")
    columns[5].metric("pairs/s", f"{summary['pairs_per_s']:.0f}" if "pairs_per_s" in summary else "—",
                      help="training pairs per second over the last logged window"
                           + (f"; median {summary['median_pairs_per_s']:.0f}" if "median_pairs_per_s" in summary else ""))


STOP_EFFECT = {
    "reading": "the run stops once its data are read, before its first step, and saves its state",
    "training": "the run saves its state after its current step and exits",
    "evaluating": "the run finishes this evaluation, saves its state and exits",
    "saving": "the run has made its last step and is writing its checkpoint: it completes",
}
"""What a stop request does in each phase of a live run."""


def live_status(run: training_runs.TrainingRun, progress: RunProgress | None) -> None:
    """A live run's phase, progress and time left from its progress file; Stop, or that a stop was requested."""
    now = time.time()
    if progress is None:
        st.caption(f"Starting: the worker is loading Python, torch and its configuration (started "
                   f"{now - (run.started or now):.0f} s ago).")
    else:
        st.progress(progress.fraction, text=md(progress.describe(now)))
    requested = stop_requested_at(run)
    if requested is None and st.button("Stop", key=f"train_stop_{run.out.name}",
                                       help="the run finishes its current step, saves its state and exits; "
                                            "Resume continues it"):
        training_runs.request_stop(run)
        requested = stop_requested_at(run) or now
    if requested is not None:  # said at once and at every refresh until the run has stopped
        phase = progress.phase if progress is not None else "reading"
        if progress is not None and progress.step is not None and progress.step >= (progress.total or 0) > 0:
            phase = "saving"  # past its last step nothing is left to stop: it evaluates and writes its checkpoint
        effect = STOP_EFFECT.get(phase, STOP_EFFECT["training"])
        st.info(f"Stop requested at {time.strftime('%H:%M:%S', time.localtime(requested))}: {effect}.")


def stop_requested_at(run: training_runs.TrainingRun) -> float | None:
    """When the run's stop request (its STOP file) was written, or None when there is none."""
    try:
        return (Path(run.out) / STOP_FILE).stat().st_mtime
    except OSError:
        return None


def ended_status(run: training_runs.TrainingRun, status: str, progress: RunProgress | None) -> None:
    """What an ended run left, and what can be done next: Home for a checkpoint, Resume for a saved state."""
    ended_at = (f" at {time.strftime('%H:%M:%S', time.localtime(progress.event['time']))}"
                if progress is not None and progress.phase == status else "")
    if status == "finished":
        st.success(f"Finished{ended_at}: the checkpoint {md(run.out.name)} is listed on Home, ready to load. "
                   "The form above offers the next free run name.")
        st.page_link(paths.HOME.path, label="Go to Home", icon=paths.HOME.icon)
    elif status == "stopped":
        where = f"Stopped at step {progress.step:,}{ended_at}" if progress is not None and progress.phase == "stopped" \
            and progress.step is not None else "Stopped"
        st.info(f"{where} with its training state saved; Resume continues it with its own command line.")
        if st.button("Resume", key=f"train_resume_{run.out.name}", disabled=not run.command):
            try:
                training_runs.start_run(training_runs.resume_command(run), run.out)
            except (RuntimeError, OSError) as error:
                st.error(f"Could not resume the run: {md(error)}")
            else:
                st.rerun(scope="app")
    else:
        why = (f": {md(progress.event.get('error', ''))}" if progress is not None and progress.phase == "failed"
               else "; its log says why")
        st.error(f"The worker ended without writing a checkpoint{why}.")
