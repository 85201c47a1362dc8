"""The README's notebook session ("Python API") runs as written: two shipped checkpoints, a challenge file by
category, the edits of one pair, one figure — through the same workflows the app and the CLI call."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nlivis.analysis.edit_filters import OFF_BY_DEFAULT

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ("esan-snli-small", "gcnn-snli-small")


def session_code() -> str:
    found = re.search(r"<!-- session:start -->\n```python\n(.*?)```\n<!-- session:end -->",
                      (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert found, "README.md has no ```python block between <!-- session:start --> and <!-- session:end -->"
    return found.group(1)


def test_the_session_block_is_found_and_uses_the_workflows():
    code = session_code()
    assert "from nlivis.workflows.evaluate import evaluate_file" in code
    assert "from nlivis.workflows.protocol import run_analysis" in code and 'run_analysis("edits"' in code


@pytest.mark.slow
def test_the_readme_session_runs_and_leaves_the_checkpoints_as_they_were(tmp_path):
    if not all((ROOT / "checkpoints" / name / "COMPLETE").is_file() for name in CHECKPOINTS):
        pytest.skip(f"needs the shipped checkpoints {', '.join(CHECKPOINTS)} in checkpoints/")
    for folder in ("checkpoints", "tests"):  # the session's relative paths, from a scratch folder for its figure
        (tmp_path / folder).symlink_to(ROOT / folder)
    before = {name: sorted(p.name for p in (ROOT / "checkpoints" / name).rglob("*")) for name in CHECKPOINTS}
    script = tmp_path / "session.py"
    script.write_text(session_code(), encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any(line.split()[:2] == ["esan-snli-small", "Basic"] for line in lines), done.stdout
    assert any("(all pairs)" in line and line.startswith("gcnn-snli-small") for line in lines), done.stdout
    assert any(line.split()[:2] == ["substitution", "hypothesis"] and "expected entailment" in line
               for line in lines), done.stdout  # a hypernym in an upward context keeps entailment
    assert not any(line.split()[:1] in ([kind] for kind in OFF_BY_DEFAULT) for line in lines), "off by default"
    page = (tmp_path / "accuracy_by_tag.html").read_text(encoding="utf-8")
    assert "vegaEmbed" in page and '"Basic (n=' in page and '"esan-snli-small"' in page, \
        "the page embeds the Vega-Lite spec with its categories and models"
    assert {name: sorted(p.name for p in (ROOT / "checkpoints" / name).rglob("*")) for name in CHECKPOINTS} == before
