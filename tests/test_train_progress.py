"""What a training run is doing before its first metrics line, read from the progress bars in its log."""
from __future__ import annotations

from pathlib import Path

from nlivis.training.runs import LOG_FILE, run_progress, run_record_folder


def write_log(out: Path, text: str) -> None:
    folder = run_record_folder(out)
    folder.mkdir(parents=True)
    (folder / LOG_FILE).write_text(text, encoding="utf-8")


def test_the_latest_frame_says_the_phase_how_far_and_how_long_is_left(tmp_path):
    out = tmp_path / "runs" / "gcnn-snli-small"
    write_log(out, "torch threads: 1\n\rspaCy:   0%|          | 0/19684 [00:00<?, ?sent/s]"
                   "\rspaCy:  45%|####5     | 8900/19684 [00:21<00:26, 410.2sent/s]")
    progress = run_progress(out)
    assert (progress.unit, progress.done, progress.total, progress.left) == ("sent", 8900, 19684, "00:26")
    assert progress.describe() == "analysing sentences with spaCy: 8,900 of 19,684 sentences, about 00:26 left (00:21 so far)"
    with open(run_record_folder(out) / LOG_FILE, "a", encoding="utf-8") as log:
        log.write("\n\r  0%|          | 0/1230 [00:00<?, ?step/s]"
                  "\rloss 1.02 acc 0.41 480 pairs/s:   3%|3         | 37/1230 [00:04<02:10, 9.13step/s]")
    progress = run_progress(out)
    assert (progress.unit, progress.done, progress.total) == ("step", 37, 1230) and 0.02 < progress.fraction < 0.04
    assert progress.describe().startswith("training: 37 of 1,230 steps, about 02:10 left")


def test_no_log_or_no_bar_yet_is_no_progress(tmp_path):
    out = tmp_path / "runs" / "x"
    assert run_progress(out) is None
    write_log(out, "torch threads: 1\nfetching the MiniLM word pieces …\n")
    assert run_progress(out) is None
