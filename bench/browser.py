"""The app served as the README starts it, and Debian's chromium driven headless by Playwright: what every browser
bench (bench/browser_speed.py, browser_edits_speed.py, datamap_draw.py) and the browser tests (the session
fixtures at the end of tests/conftest.py) start, so that all of them start it one way.

Bench scripts import it by name (`from browser import …`), the tests as `bench.browser`: it imports nothing from
nlivis or the other bench modules, so both work. Playwright is imported only when a browser is launched.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (apt-get install chromium): Playwright drives it, never a browser it downloads."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-gpu-rasterization", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
"""--disable-gpu-rasterization undoes the --enable-gpu-rasterization of Debian's /etc/chromium.d/default-flags, which
on a machine without a GPU has SwiftShader emulate a GPU to raster every tile (~10% of chromium's CPU time in the
browser tests); WebGL (the data map) still draws through SwiftShader."""
DATA = Path(os.environ.get("NLIVIS_DATA", ROOT.parent / "shared" / "data"))
HANG_GUARD_S = 300.0
"""How long the server may take to answer before it counts as hung. A guard against waiting forever, not a speed
limit: a loaded two-core machine takes tens of seconds, and a server that exits is reported at once."""


def require_chromium() -> None:
    """Exit with one line naming the path when Debian's chromium is missing (every browser bench needs it)."""
    if not CHROMIUM.is_file():
        sys.exit(f"needs Debian's chromium at {CHROMIUM}")


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def app_environment(checkpoints: Sequence[Path], runs: Path, data: Path = DATA) -> dict[str, str]:
    """This process's environment with the app's folders set: the checkpoint roots (searched in this order), the
    data and a runs folder of the caller's own (so a test or a bench never writes runs into the checkout)."""
    return {**os.environ, "NLIVIS_CHECKPOINTS": os.pathsep.join(map(str, checkpoints)), "NLIVIS_DATA": str(data),
            "NLIVIS_RUNS": str(runs)}


class AppServer:
    """`streamlit run app.py` on a free loopback port, as a user starts it; entering waits until it answers,
    leaving stops it (terminated, killed if it lingers) whatever happened in between."""

    def __init__(self, env: dict[str, str], log: Path, app_root: Path = ROOT, cwd: Path | None = None) -> None:
        """`cwd`: the server's working folder when not `app_root` (relative folders in `env` are relative to it);
        the app's .streamlit settings are linked into it, as Streamlit reads them from the working folder."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.log = open(log, "ab")
        self.started = time.perf_counter()
        if cwd is not None and not (cwd / ".streamlit").exists():
            (cwd / ".streamlit").symlink_to(app_root / ".streamlit", target_is_directory=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py" if cwd is None else str(app_root / "app.py"),
             "--server.headless", "true", "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=cwd or app_root, env=env, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_until_answering(self) -> None:
        """Poll Streamlit's health endpoint until it says ok; RuntimeError with the log's end if the process
        exits first, or if HANG_GUARD_S pass (then it is hung, however slow the machine)."""
        guard = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < guard:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.process.returncode}: {self.log_tail()}")
            time.sleep(0.05)
        raise RuntimeError(f"streamlit did not answer within {HANG_GUARD_S:.0f} s: {self.log_tail()}")

    def log_tail(self) -> str:
        self.log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def __enter__(self) -> AppServer:
        try:
            self.wait_until_answering()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's chromium, headless, launched through Playwright; closed, with Playwright, on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
