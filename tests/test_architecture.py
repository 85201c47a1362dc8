"""The shape of the package (README, "Architecture"): layers that import only downwards (the import-linter
contract in .importlinter), no import cycles, no private names taken from another module, and a help text
with a default for every option of every command."""
from __future__ import annotations

import argparse
import ast
import configparser
import re
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def test_the_layer_contract_is_kept(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    assert lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True, no_logo=True) == 0, \
        "an import points up a layer: run `lint-imports` in the project root to see which"


LAYERS = ["__main__", "cli | app", "workflows", "training", "inference", "analysis | viz", "models", "features",
          "data | store"]
"""The package's floors, top to bottom (README, "Architecture"): each imports only from the floors below it."""
APP_LAYERS = ["components", "cache", "background", "state | paths | text"]
STORE_WRITER = re.compile(r"^(write_|save_|rewrite_|atomic_|cache_root$)")
"""Names of the store's writing functions (and of the cache folder they write under)."""


def _contracts() -> dict[str, configparser.SectionProxy]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / ".importlinter", encoding="utf-8")
    return {section.removeprefix("importlinter:contract:"): parser[section] for section in parser.sections()
            if section.startswith("importlinter:contract:")}


def _listed(value: str) -> list[str]:
    return [line.strip() for line in value.strip().splitlines() if line.strip()]


def test_the_contracts_say_what_the_architecture_says():
    """The contracts that `test_the_layer_contract_is_kept` runs are the ones the README draws: every floor in
    order and exhaustive (a new subpackage must be placed), analysis and viz forbidden to run checkpoints or
    write files, and the app's inner floors — so loosening one is a visible change to this test."""
    contracts = _contracts()
    layers = contracts["layers"]
    assert (layers["type"], layers["containers"].strip(), layers["exhaustive"]) == ("layers", "nlivis", "true")
    assert _listed(layers["layers"]) == LAYERS
    pure = contracts["pure-analysis"]
    assert pure["type"] == "forbidden" and _listed(pure["source_modules"]) == ["nlivis.analysis", "nlivis.viz"]
    assert {"nlivis.inference", "nlivis.store.files"} <= set(_listed(pure["forbidden_modules"]))
    app = contracts["app-layers"]
    assert (app["containers"].strip(), app["exhaustive"]) == ("nlivis.app", "true")
    assert _listed(app["layers"]) == APP_LAYERS


def test_analysis_and_viz_import_no_store_writer():
    """The forbidden contract names whole modules; a store module that reads and writes (predictions, dynamics)
    may be read by analysis, but none of its writing functions may be imported there."""
    offenders = []
    for path in [*sorted((ROOT / "nlivis" / "analysis").rglob("*.py")), *sorted((ROOT / "nlivis" / "viz").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nlivis.store"):
                offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{alias.name}"
                              for alias in node.names if STORE_WRITER.match(alias.name)]
    assert offenders == []


def test_the_writer_pattern_catches_the_store_writers():
    """The name test above cannot pass by matching nothing: every writing function the store defines matches."""
    writers = [node.name for path in sorted((ROOT / "nlivis" / "store").glob("*.py"))
               for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.FunctionDef) and STORE_WRITER.match(node.name)]
    assert {"write_predictions", "atomic_write_json", "save_tensors", "cache_root"} <= set(writers)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), over every import, in functions too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(graph.modules):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_cycles(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    assert _cycles(grimp.build_graph("nlivis", cache_dir=None)) == []


def _python_files() -> list[Path]:
    return [*sorted((ROOT / "nlivis").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nlivis"):
                offenders += [f"{path.relative_to(ROOT)}: {node.module}.{alias.name}"
                              for alias in node.names if alias.name.startswith("_")]
    assert offenders == []


def test_pages_import_only_the_app_layer():
    """A page is a title and a few component calls: everything it uses comes through `nlivis.app`, so domain logic
    and figures cannot creep back into pages/."""
    offenders = []
    for path in [*sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in names
                          if name.split(".")[0] not in {"nlivis", "streamlit", "__future__"}
                          or (name.startswith("nlivis") and not name.startswith("nlivis.app"))]
    assert offenders == []


def _commands():
    from nlivis.cli import COMMANDS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(name, sub.choices[name]) for name in COMMANDS]


@pytest.mark.parametrize("name,parser", _commands(), ids=lambda value: value if isinstance(value, str) else "")
def test_every_option_says_what_it_does_and_its_default(name, parser):
    chosen_one_of = {id(action) for group in parser._mutually_exclusive_groups if group.required
                     for action in group._group_actions}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{name} {action.option_strings or action.dest}: no help text"
        takes_value = action.option_strings and action.nargs != 0 and not action.required \
            and id(action) not in chosen_one_of
        if takes_value:
            rendered = parser.formatter_class(prog="x")._get_help_string(action)
            assert "default" in rendered, f"{name} {action.option_strings}: the help does not say the default"
