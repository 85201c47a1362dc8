"""The app's side of training runs and folders (issue 12): runs go to a user data folder outside the checkout and
show up on Home, the default run can start on a fresh install, one Start launches one worker, a terminal run
is honoured, and folder names no file system accepts are explained instead of raising."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")

from nlivis.training import runs as training_runs  # noqa: E402
from nlivis.training.run_folder import RUN_LOCK_FILE  # noqa: E402
from tests.fixtures.app_checkpoints import APP_DATA, gcnn_family  # noqa: E402
from tests.test_app_pages import FAKE_WORKER, command_line, open_app, show, texts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NAME_BOX = "train_name_gcnn_snli-small_1"


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    return gcnn_family(tmp_path_factory.mktemp("app_runs") / "checkpoints")


def _end(run: training_runs.TrainingRun) -> None:
    """End a worker this test started (its own process group), and reap it."""
    if run.pid is None:
        return
    try:
        os.killpg(run.pid, signal.SIGKILL)
        os.waitpid(run.pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def test_runs_default_to_a_user_folder_outside_the_checkout_that_home_scans(monkeypatch, tmp_path, checkpoints):
    user_runs = tmp_path / "xdg-data" / "nlivis" / "runs"
    app = show(open_app(monkeypatch, tmp_path, checkpoints, APP_DATA), "pages/8_Train.py")
    assert f"Writes a checkpoint folder under **{user_runs}**" in texts(app, "caption")
    assert "--out " + str(user_runs / "gcnn-snli-small") in command_line(app)
    user_runs.mkdir(parents=True)
    import shutil

    shutil.copytree(checkpoints / "gcnn-snli-small", user_runs / "my-run")
    shutil.copytree(checkpoints / "embeddings", user_runs / "embeddings")
    home = open_app(monkeypatch, tmp_path, checkpoints, APP_DATA)
    assert str(user_runs) in texts(home, "caption")
    assert "my-run" in set(home.dataframe[0].value["checkpoint"])


def test_a_fresh_install_starts_the_default_run_with_one_click(monkeypatch, tmp_path):
    shipped = ROOT / "checkpoints"
    app = show(open_app(monkeypatch, tmp_path, shipped, APP_DATA), "pages/8_Train.py")
    assert app.text_input(key=NAME_BOX).value == "gcnn-snli-small-run2", "the shipped checkpoint's name is taken"
    assert not texts(app, "warning") and not app.button(key="train_start").disabled
    app.button(key="train_start").click().run()
    assert not app.exception, app.exception
    out = tmp_path / "xdg-data" / "nlivis" / "runs" / "gcnn-snli-small-run2"
    run = training_runs.read_run(out)
    try:
        assert run is not None and run.running and "--out" in run.command
        assert str(out) == run.command[run.command.index("--out") + 1]
        assert not str(out).startswith(str(ROOT)), "nothing is written into the git checkout"
    finally:
        _end(run)


def test_two_quick_start_requests_launch_one_worker(monkeypatch, tmp_path):
    out = tmp_path / "runs" / "race"
    real_popen = subprocess.Popen

    def slow_popen(*args, **kwargs):  # launching takes a while, as a real worker does
        time.sleep(0.5)
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(training_runs.subprocess, "Popen", slow_popen)
    started, refused = [], []
    barrier = threading.Barrier(2)

    def click():
        barrier.wait()
        try:
            started.append(training_runs.start_run([sys.executable, "-c", FAKE_WORKER, str(out)], out))
        except RuntimeError as error:
            refused.append(str(error))

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(started) == 1 and len(refused) == 1, (started, refused)
        assert "already writing to" in refused[0]
        assert training_runs.read_run(out).pid == started[0].pid
    finally:
        for run in started:
            _end(run)


def test_train_page_offers_no_start_on_a_folder_a_terminal_run_is_preparing(monkeypatch, tmp_path, other_live_process):
    runs = tmp_path / "runs"
    out = runs / "from-terminal"
    out.mkdir(parents=True)
    (out / RUN_LOCK_FILE).write_text(json.dumps({"pid": other_live_process.pid, "host": socket.gethostname(),
                                             "started": time.time(), "command": ["python", "-m", "nlivis", "train"]}))
    app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")
    app.text_input(key=NAME_BOX).set_value("from-terminal").run()
    assert f"a training process (pid {other_live_process.pid}" in texts(app, "warning")
    assert app.button(key="train_start").disabled


@pytest.mark.parametrize("name, message", [
    ("n" * 300, "at most 255"), ("a\0b", "NUL byte"), ("embeddings", "reserved"), ("", "empty"), ("a/b", "single folder"),
])
def test_train_page_explains_run_names_that_cannot_be_folders(monkeypatch, tmp_path, name, message):
    runs = tmp_path / "runs"
    app = show(open_app(monkeypatch, tmp_path, runs, APP_DATA, runs=runs), "pages/8_Train.py")
    app.text_input(key=NAME_BOX).set_value(name).run()
    assert not app.exception, app.exception
    assert message in texts(app, "warning") and app.button(key="train_start").disabled


@pytest.mark.parametrize("folder, message", [("/tmp/" + "n" * 300, "at most 255"), ("/tmp/a\0b", "NUL byte")])
def test_home_folder_boxes_explain_paths_no_file_system_accepts(monkeypatch, tmp_path, checkpoints, folder, message):
    app = open_app(monkeypatch, tmp_path, checkpoints, APP_DATA)
    for box, label in (("home_extra_root", "Scan this folder"), ("home_data_root", "Use this data folder")):
        app.text_input(key=box).set_value(folder).run()
        next(b for b in app.button if b.label == label).click().run()
        assert not app.exception, app.exception
        assert message in texts(app, "error"), box


def test_home_says_when_nlivis_data_does_not_exist(monkeypatch, tmp_path, checkpoints):
    app = open_app(monkeypatch, tmp_path, checkpoints, tmp_path / "no-such-data")
    warning = texts(app, "warning")
    assert f"NLIVIS_DATA is set to {tmp_path / 'no-such-data'}, which is not a folder" in warning
    shared = ROOT.parent / "shared" / "data"
    assert (f"using {shared} instead" if shared.is_dir() else "no data folder is used") in warning


def test_shipped_streamlit_config_listens_on_localhost_without_telemetry_deploy_button_or_forced_collection():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "localhost"
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["toolbarMode"] == "viewer"
    assert config["runner"]["postScriptGC"] is False  # a full gc.collect(2) after every run: ~0.4 s of each click


def test_what_a_run_leaves_in_the_checkout_is_ignored_by_git(tmp_path):
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    leftovers = ["checkpoints/.runs/my-run/train.log", "checkpoints/my-run/.nlivis-lock.json", "checkpoints/my-run/STOP",
                 "checkpoints/my-run/state/state.json", "checkpoints/.my-run.partial-123/model.safetensors",
                 "checkpoints/.my-run.ready-123/COMPLETE", "checkpoints/my-run/.state.partial-9/rng.safetensors"]
    checked = subprocess.run(["git", "check-ignore", "--no-index", *leftovers], cwd=ROOT, capture_output=True, text=True)
    assert checked.stdout.split() == leftovers
