"""bench/harness.py's script-run timer, which bench/page_script_time.py and bench/script_time.py share: each run of
the app's script is recorded (also one that raised), profiled only when asked, and Streamlit's runner is put back
when the block ends. Speeds are never asserted, only which clock counted what."""
from __future__ import annotations

import cProfile
import pstats
import subprocess
import sys
import time

import pytest
from streamlit.runtime.scriptrunner import script_runner
from streamlit.testing.v1 import AppTest

from bench.harness import ROOT, ScriptRun, timed_script_runs


@pytest.fixture
def fake_runs(monkeypatch) -> list[tuple[object, object]]:
    """ScriptRunner._run_script replaced (for this test only) by one that notes its arguments, sleeps 50 ms and
    raises when the rerun data says so."""
    calls: list[tuple[object, object]] = []

    def run_script(runner, rerun_data) -> None:
        calls.append((runner, rerun_data))
        time.sleep(0.05)
        if rerun_data == "raise":
            raise RuntimeError("the script failed")

    monkeypatch.setattr(script_runner.ScriptRunner, "_run_script", run_script)
    return calls


def test_each_run_is_recorded_in_order_and_the_runner_is_put_back(fake_runs):
    fake, runs = script_runner.ScriptRunner._run_script, []
    with timed_script_runs(runs.append):
        assert script_runner.ScriptRunner._run_script is not fake
        script_runner.ScriptRunner._run_script("runner", "first")
        with pytest.raises(RuntimeError, match="the script failed"):
            script_runner.ScriptRunner._run_script("runner", "raise")
    assert script_runner.ScriptRunner._run_script is fake
    assert fake_runs == [("runner", "first"), ("runner", "raise")]
    assert [run.number for run in runs] == [1, 2]
    assert all(isinstance(run, ScriptRun) and run.profile is None for run in runs)
    # the sleep is wall time, not the thread's CPU time
    assert all(run.wall >= 0.05 > run.cpu >= 0 for run in runs)
    assert runs[0].ended <= runs[1].ended <= time.time()


def test_the_runner_is_put_back_when_the_block_raises(fake_runs):
    fake = script_runner.ScriptRunner._run_script
    with pytest.raises(KeyError), timed_script_runs(lambda run: None):
        raise KeyError("the bench stopped")
    assert script_runner.ScriptRunner._run_script is fake


def test_a_run_is_profiled_only_while_asked(fake_runs):
    asked, runs = {"on": False}, []
    with timed_script_runs(runs.append, profile=lambda: asked["on"], profile_clock=None):
        script_runner.ScriptRunner._run_script("runner", "plain")
        asked["on"] = True
        script_runner.ScriptRunner._run_script("runner", "profiled")
    assert runs[0].profile is None and isinstance(runs[1].profile, cProfile.Profile)
    profiled = {function for _, _, function in pstats.Stats(runs[1].profile).stats}
    assert "run_script" in profiled


def test_an_app_scripts_runs_under_apptest_are_timed():
    runs: list[ScriptRun] = []
    real = script_runner.ScriptRunner._run_script
    with timed_script_runs(runs.append):
        app = AppTest.from_string("import streamlit as st\nst.title('timed')").run()
    assert not app.exception and app.title[0].value == "timed"
    assert len(runs) == 1 and runs[0].wall > 0
    assert script_runner.ScriptRunner._run_script is real


def test_importing_harness_loads_nothing_of_nlivis():
    """script_time's --serve imports harness before `streamlit run` puts the served checkout's app on the path: had
    harness imported nlivis, an --app-root checkout would run this checkout's package."""
    probe = ("import sys; sys.path.insert(0, 'bench'); import harness; assert 'nlivis' not in sys.modules; "
             "from nlivis.models.families import SHIPPED_FAMILIES; assert harness.SHIPPED == SHIPPED_FAMILIES")
    subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True)
