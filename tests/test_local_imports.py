"""A function-local import in nlivis/ only defers a heavy third-party library (issue 33, item 5).

An import inside a function hides an arrow from readers and from `lint-imports`, so it is allowed only where it
buys a faster start: it loads a heavy library (HEAVY) that the enclosing module does not load already, either
directly or through an nlivis module whose module-level imports reach one. Everything here reads source with `ast`
and imports nothing of the package, so the test runs in well under a second.

tqdm is not heavy: pure Python, ~70 ms to import, no native extension behind it. transformers is, and is not a
dependency either: the bench imports it only where a bench environment installed it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nlivis"
MOST_LOCAL_IMPORTS = 90

HEAVY = frozenset({"torch", "spacy", "streamlit", "plotly", "pandas", "scipy", "umap", "captum", "nltk", "numba",
                   "pynndescent", "safetensors", "entmax", "playwright", "transformers"})
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class LocalImport:
    """One import statement whose nearest enclosing scope is a function."""

    path: Path
    line: int
    module: str            # the module whose function holds the import
    targets: tuple[str, ...]  # the modules it loads (dotted names)

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line} imports {', '.join(self.targets)}"


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> source file, for every .py file under `package` (a folder with __init__.py)."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The dotted names `node` loads, relative imports resolved; `from a import b` counts a.b when b is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def scan(tree: ast.Module) -> tuple[list[ast.Import | ast.ImportFrom], list[ast.Import | ast.ImportFrom]]:
    """(imports run when the module loads, imports whose nearest enclosing scope is a function)."""
    top: list = []
    local: list = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and not in_function and is_type_checking(child):
                for other in child.orelse:
                    visit_one(other, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            (local if in_function else top).append(child)
        visit(child, in_function or isinstance(child, FUNCTIONS))

    visit(tree, False)
    return top, local


def parents(name: str) -> list[str]:
    """Importing a.b.c runs a, a.b and a.b.c."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


class ImportGraph:
    """Which heavy libraries each module of a package loads at import time, and its function-local imports."""

    def __init__(self, package: Path):
        self.root = package.parent
        self.files = module_names(package)
        known = set(self.files)
        self.top: dict[str, set[str]] = {}
        self.local: list[LocalImport] = []
        for module, path in self.files.items():
            is_package = path.name == "__init__.py"
            top, local = scan(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
            self.top[module] = {name for node in top for name in imported_modules(node, module, is_package, known)}
            self.local += [LocalImport(path, node.lineno, module,
                                       tuple(imported_modules(node, module, is_package, known))) for node in local]
        self._heavy: dict[str, frozenset[str]] = {}

    def heavy_loaded(self, name: str) -> frozenset[str]:
        """The heavy libraries that importing `name` (with its parent packages) loads."""
        found: set[str] = set()
        seen: set[str] = set()
        pending = parents(name)
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            if current.split(".")[0] in HEAVY:
                found.add(current.split(".")[0])
            for imported in self.top.get(current, ()):
                pending += parents(imported)
        return frozenset(found)

    def defers_heavy(self, entry: LocalImport) -> bool:
        """The import loads a heavy library that its own module has not loaded at import time."""
        already = self.heavy_loaded(entry.module)
        return any(self.heavy_loaded(target) - already for target in entry.targets)

    def unjustified(self) -> list[LocalImport]:
        return [entry for entry in self.local if not self.defers_heavy(entry)]


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return ImportGraph(PACKAGE)


def test_every_function_local_import_defers_a_heavy_library(graph):
    assert len(graph.files) > 50 and graph.local, "the scan found no modules or no local imports"
    offenders = [entry.where(graph.root) for entry in graph.unjustified()]
    assert not offenders, (f"{len(offenders)} function-local imports defer no heavy library; move them to the "
                           "module top:\n" + "\n".join(offenders))


def test_at_most_90_function_local_imports(graph):
    count = len(graph.local)
    assert 0 < count <= MOST_LOCAL_IMPORTS, f"{count} function-local imports in nlivis/ (at most {MOST_LOCAL_IMPORTS})"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def test_the_classifier_on_a_small_package(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/light.py": "import json\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/model.py": "from .. import light\nimport torch.nn\n",   # heavy through torch
        "pkg/sub/wrapper.py": "from pkg.sub import model\n",             # heavy through pkg.sub.model
        "pkg/user.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import pandas\n"                       # never runs: user stays light
            "def a():\n    import json\n"                                 # 5: stdlib
            "def b():\n    from pkg import light\n"                       # 7: light nlivis module
            "def c():\n    from pkg.sub import wrapper\n"                 # 9: heavy through two hops
            "def d():\n    from .sub.model import X\n"                    # 11: relative, heavy
            "class K:\n    def e(self):\n        import spacy\n"          # 14: heavy, method
            "def f():\n    g = lambda: __import__('x')\n    import numpy\n"  # 17: numpy is light
        ),
        "pkg/already.py": "import torch\ndef g():\n    import torch.nn.functional\n",  # 3: torch loaded already
    })
    graph = ImportGraph(tmp_path / "pkg")
    assert len(graph.local) == 7
    flagged = sorted((entry.path.name, entry.line) for entry in graph.unjustified())
    assert flagged == [("already.py", 3), ("user.py", 5), ("user.py", 7), ("user.py", 17)]
    assert graph.heavy_loaded("pkg.user") == frozenset()
    assert graph.heavy_loaded("pkg.sub.wrapper") == {"torch"}
