"""``mahjong-planet run``: one process per data directory and per port (issue 17, defect 1).

A second process on a data directory in use, or on a port in use, exits at once with a
clear message and changes nothing; the first keeps deciding every hand alone, and its log
audits clean.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from services.runtime.datadir import LOCK_FILE, DataDirInUse, lock_data_dir

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "services.cli"]
REFUSED_WITHIN_S = 20.0  # the whole interpreter start, on a busy 2-core machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "MAHJONG_POSTGRES_DSN", "MAHJONG_PG_DSN"):
        env.pop(name, None)
    return env


def _run(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, "run", "--data", str(data), "--port", str(port), "--log-format", "text"],
        cwd=ROOT,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=_env(),
    )


def _wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"run exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"run never became ready:\n{log.read_text()}")


def _refused(proc: subprocess.Popen[bytes], log: Path) -> str:
    """The refused process's output, after checking it exited at once, non-zero."""
    try:
        proc.wait(REFUSED_WITHIN_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(
            f"still running after {REFUSED_WITHIN_S} s:\n{log.read_text()}"
        ) from None
    out = log.read_text()
    assert proc.returncode != 0, out
    return out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_second_run_on_a_data_directory_in_use_exits_and_the_first_plays_on_alone(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    port, other_port = _free_port(), _free_port()
    first = _run(data, port, tmp_path / "first.log")
    try:
        _wait_ready(first, port, tmp_path / "first.log")
        before = sorted(p.name for p in data.iterdir())

        second = _run(data, other_port, tmp_path / "second.log")
        out = _refused(second, tmp_path / "second.log")
        assert "in use" in out and str(first.pid) in out, out
        assert "Traceback" not in out, out
        assert sorted(p.name for p in data.iterdir()) == before
        assert (data / LOCK_FILE).read_text() == f"{first.pid}\n"

        # The first still decides every table, alone: hands played through its table
        # service (this process only sends commands and reads events) audit clean.
        sim = subprocess.run(
            [
                *CLI,
                "simulate",
                "--data",
                str(data),
                *("--hands", "6", "--tables", "3"),
                "--external-table-service",
            ],
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert sim.returncode == 0, sim.stderr[-2000:]
        assert "6 hands" in sim.stdout, sim.stdout
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    finally:
        _stop(first)
    assert first.returncode == 0
    audit = subprocess.run(
        [*CLI, "audit", "--data", str(data)], cwd=ROOT, env=_env(), capture_output=True, text=True
    )
    assert audit.returncode == 0, audit.stdout[-2000:]
    assert "0 failed" in audit.stdout and "audited 6 hands" in audit.stdout, audit.stdout


def test_a_run_on_a_port_in_use_exits_before_it_opens_anything(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = _free_port()
    first = _run(data, port, tmp_path / "first.log")
    try:
        _wait_ready(first, port, tmp_path / "first.log")
        fresh = tmp_path / "fresh"
        third = _run(fresh, port, tmp_path / "third.log")
        out = _refused(third, tmp_path / "third.log")
        assert f"cannot listen on 127.0.0.1:{port}" in out, out
        assert "running" not in out and "Traceback" not in out, out  # no service started
        assert not fresh.exists()  # its data directory was never created, let alone opened
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    finally:
        _stop(first)


def test_the_data_directory_lock_is_exclusive_and_dies_with_its_holder(tmp_path: Path) -> None:
    held = lock_data_dir(tmp_path / "d")
    with pytest.raises(DataDirInUse, match=f"in use by process {os.getpid()}"):
        # flock locks belong to the open file: a second descriptor is refused even in the
        # holder's own process, as another process would be.
        lock_data_dir(tmp_path / "d")
    held.release()
    lock_data_dir(tmp_path / "d").release()
