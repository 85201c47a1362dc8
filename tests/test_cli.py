"""The command line refuses impossible numbers and bad paths in one line, before any work, and says what
went wrong on stdout too under --json."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nlivis.cli import main
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG


HEAVY_LIBRARIES = ("torch", "pandas", "spacy", "scipy", "plotly", "streamlit", "nltk", "numba", "umap", "captum")


def test_help_in_a_new_process_loads_no_heavy_library():
    """`python -m nlivis --help` builds every command's options and nothing more: a command module that loads
    torch or pandas at import (for its run) made every CLI start, --help included, pay 4-5 s."""
    code = ("import sys, contextlib, io\nfrom nlivis.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    main(['--help'])\n"
            f"print([name for name in {HEAVY_LIBRARIES!r} if name in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("argv, fragment", [
    (["--epochs", "inf"], "argument --epochs: the value must be a finite number of epochs above 0; got inf"),
    (["--epochs", "nan"], "argument --epochs: the value must be a finite number of epochs above 0; got nan"),
    (["--epochs", "0"], "must be above 0 and at most 1,000,000; got 0"),
    (["--seed", str(2 ** 70)], "argument --seed: the value must be an integer from 0 to 4,294,967,295"),
    (["--seed", "-1"], "must be an integer from 0 to 4,294,967,295"),
    (["--max-steps", "0"], "argument --max-steps: the value must be an integer of at least 1; got 0"),
], ids=["epochs-inf", "epochs-nan", "epochs-0", "seed-huge", "seed-negative", "max-steps-0"])
def test_train_refuses_impossible_numbers_before_anything_is_written(tmp_path, capsys, argv, fragment):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
              "--out", str(out), *argv])
    assert stopped.value.code == 2
    assert fragment in capsys.readouterr().err
    assert not out.exists()


def test_explain_refuses_a_step_count_that_would_exhaust_memory(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["explain", "checkpoints/gcnn-snli-small", "--premise", "A b .", "--hypothesis", "A .",
              "--steps", "100000000"])
    assert stopped.value.code == 2 and "from 1 to 10,000 integrated-gradients steps" in capsys.readouterr().err


def test_evaluate_file_that_is_a_folder_is_named(tmp_path, capsys):
    code = main(["evaluate", "checkpoints/gcnn-snli-small", "--file", str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and "is a folder; give the file itself" in captured.err
    assert "is a folder" in json.loads(captured.out)["error"]


def test_json_errors_reach_stdout(tmp_path, capsys):
    code = main(["predict", str(tmp_path / "missing"), "--premise", "A b .", "--hypothesis", "A .", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and len(captured.err.strip().splitlines()) == 1
    assert "missing" in json.loads(captured.out)["error"]
