"""Browser tests: the real platform (``mahjong-planet run`` in a subprocess, embedded log in a
temporary folder) and headless Debian Chromium driven by Playwright for Python.

Chromium comes from Debian's package (``/usr/bin/chromium``; ``make test`` installs it when
missing). Playwright's own browser download cannot work without internet, so it is never
used. A missing Chromium fails the tests; it never skips them.

Screenshots go to ``test-artifacts/screenshots/`` (``MAHJONG_ARTIFACTS`` to move them).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("MAHJONG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("MAHJONG_ARTIFACTS", ROOT / "test-artifacts")) / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install Debian's package "
            "(apt-get install -y chromium; `make test` does it) or set MAHJONG_CHROMIUM"
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@contextlib.contextmanager
def running_server(data: Path, port: int, log_path: Path) -> Iterator[str]:
    """``mahjong-planet run --data data --port port`` until the block ends; its base URL.

    Run it again with the same ``data`` (and port) to restart the platform on its log."""
    log = log_path.open("a")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "run", "--data", str(data), "--port", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if proc.poll() is not None:
                raise RuntimeError(log_path.read_text())
            try:
                if httpx.get(f"{url}/healthz", timeout=1).json().get("ok"):
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("the server did not come up:\n" + log_path.read_text())
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``mahjong-planet run`` on a free port; its base URL."""
    with running_server(tmp_path / "data", free_port(), tmp_path / "server.log") as url:
        yield url


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Any:
    """``shot(page, name)`` saves a full-page screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = ARTIFACTS / f"{request.node.name}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
