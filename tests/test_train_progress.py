"""What a training run is doing, read by the Train page from the progress file its worker writes (issue 30):
the phase, the step, and the time left from the steps this process has made."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.training.progress import PHASES, ProgressLog, read_progress
from nlivis.training.runs import run_progress, run_record_folder


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_phases_steps_and_time_left_come_from_the_events(tmp_path):
    clock = Clock()
    path = tmp_path / "progress.jsonl"
    log = ProgressLog(path, fresh=True, clock=clock)
    assert read_progress(path) is None, "no event yet"
    log.phase("reading", split="snli_test")
    clock.now += 12
    progress = read_progress(path)
    assert progress.phase == "reading" and progress.describe(clock.now) == "reading the data: snli_test (0:12)"
    log.phase("training", step=0, total=100)
    for step in range(1, 21):  # one step every 0.5 s: an event every other step (at most one a second)
        clock.now += 0.5
        log.step(step, 100)
    progress = read_progress(path)
    assert (progress.phase, progress.step, progress.total) == ("training", 20, 100)
    assert progress.steps_per_s == 2.0 and progress.seconds_left() == 40.0
    assert progress.describe(clock.now) == "training: step 20 of 100, about 0:40 left"
    assert len(path.read_text().splitlines()) == 1 + 1 + 10, "steps are written at most once a second"
    log.phase("evaluating", step=20, total=100)
    clock.now += 3
    assert read_progress(path).describe(clock.now) == "evaluating on the select split at step 20 (0:03)"
    log.phase("saving", what="saving the training state (Resume continues from it)")
    log.phase("stopped", step=20, total=100)
    assert read_progress(path).describe(clock.now) == "stopped at step 20"


def test_a_resumed_run_measures_its_own_speed_and_a_fresh_one_forgets_the_old_events(tmp_path):
    clock = Clock()
    path = tmp_path / "progress.jsonl"
    log = ProgressLog(path, fresh=True, clock=clock)
    log.phase("training", step=0, total=100)
    clock.now += 10
    log.step(10, 100)
    log.phase("stopped", step=10, total=100)
    clock.now += 3600  # an hour later, resumed: the pause is not part of its speed
    resumed = ProgressLog(path, fresh=False, clock=clock)
    resumed.phase("training", step=10, total=100, resumed=True)
    clock.now += 10
    resumed.step(30, 100)
    progress = read_progress(path)
    assert progress.steps_per_s == 2.0 and progress.step == 30
    ProgressLog(path, fresh=True, clock=clock)
    assert read_progress(path) is None


def test_the_page_reads_the_run_record_folders_file_and_skips_a_half_written_line(tmp_path):
    out = tmp_path / "runs" / "gcnn-snli-small"
    folder = run_record_folder(out)
    folder.mkdir(parents=True)
    (folder / "progress.jsonl").write_text(json.dumps({"time": 5.0, "phase": "training", "step": 3, "total": 9})
                                           + "\n" + '{"time": 6.0, "phase": "evalu', encoding="utf-8")
    progress = run_progress(out)
    assert (progress.phase, progress.step, progress.fraction) == ("training", 3, 3 / 9)
    assert run_progress(tmp_path / "runs" / "other") is None


event = st.fixed_dictionaries({"time": st.floats(0, 1e9), "phase": st.sampled_from(PHASES)},
                              optional={"step": st.integers(0, 10_000), "total": st.integers(0, 10_000),
                                        "split": st.text(max_size=8), "resumed": st.booleans()})


@settings(max_examples=60, deadline=None)
@given(events=st.lists(event | st.text(max_size=20).map(lambda text: {"junk": text}), max_size=12),
       tail=st.text(max_size=30))
def test_any_file_reads_as_its_last_whole_event_or_none(tmp_path_factory, events, tail):
    path = Path(tmp_path_factory.mktemp("progress")) / "progress.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + tail.replace("\n", " "), encoding="utf-8")
    progress = read_progress(path)
    whole = [e for e in events if "phase" in e]
    try:
        tail_event = json.loads(tail)
    except ValueError:
        tail_event = None
    if isinstance(tail_event, dict) and tail_event.get("phase") in PHASES and isinstance(tail_event.get("time"), (int, float)):
        whole.append(tail_event)
    if not whole:
        assert progress is None
        return
    assert progress.phase == whole[-1]["phase"] and 0.0 <= progress.fraction <= 1.0
    assert progress.seconds_left() is None or progress.seconds_left() >= 0
    assert isinstance(progress.describe(progress.since), str)
