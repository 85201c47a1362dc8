"""The size limits of the developers' guide (issue 33): no module in nlivis/ over 700 lines, no function over 60,
and the app's cached layer (nlivis/app/cache/) in modules of at most 400.

A long module mixes seams a reader has to tell apart; a long function hides its steps. Read with `ast` only, so it
costs a fraction of a second. Functions are counted from their first decorator to their last line, nested ones too.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOST_MODULE_LINES = 700
MOST_FUNCTION_LINES = 60
MOST_CACHE_MODULE_LINES = 400
"""The app's cached layer is typed `st.cache_resource` wrappers; a longer module there is doing a workflow's job."""
CHECKED = [ROOT / "nlivis", ROOT / "pages", ROOT / "app.py"]


def sources(places: list[Path]) -> list[Path]:
    return sorted(file for place in places
                  for file in ([place] if place.is_file() else place.rglob("*.py")))


def long_functions(path: Path, most: int, root: Path = ROOT) -> list[str]:
    """'file:line name (N lines)' for every function or method in `path` longer than `most` lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
            length = node.end_lineno - start + 1
            if length > most:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_module_in_nlivis_is_over_700_lines():
    modules = sources([ROOT / "nlivis"])
    assert len(modules) > 50
    long = [f"{path.relative_to(ROOT)} ({lines} lines)" for path in modules
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_MODULE_LINES]
    assert not long, "split these modules along their seams:\n" + "\n".join(long)


def test_no_module_of_the_apps_cached_layer_is_over_400_lines():
    modules = sources([ROOT / "nlivis" / "app" / "cache"])
    assert len(modules) >= 2
    long = [f"{path.relative_to(ROOT)} ({lines} lines)" for path in modules
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_CACHE_MODULE_LINES]
    assert not long, "move the work into nlivis/workflows or split the wrappers:\n" + "\n".join(long)


def test_no_function_is_over_60_lines():
    long = [entry for path in sources(CHECKED) for entry in long_functions(path, MOST_FUNCTION_LINES)]
    assert not long, "split these functions into named steps:\n" + "\n".join(long)


def test_the_function_measure(tmp_path):
    body = "\n".join(f"    x = {i}" for i in range(58))
    (tmp_path / "sample.py").write_text(f"@decorator\ndef long():\n{body}\n    return x\n\n"
                                        "class K:\n    def short(self):\n        return 1\n", encoding="utf-8")
    # 1 decorator + 1 def + 58 + 1 return = 61 lines
    assert long_functions(tmp_path / "sample.py", 60, tmp_path) == ["sample.py:2 long (61 lines)"]
    assert long_functions(tmp_path / "sample.py", 61, tmp_path) == []
