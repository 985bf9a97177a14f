"""Real servers for the integration tests: a Kafka broker and a PostgreSQL database.

Each session-scoped fixture takes the first of these that works:

1. the environment: ``KAFKA_BOOTSTRAP_SERVERS`` / ``MAHJONG_PG_DSN`` (used as given);
2. testcontainers, only when a Docker engine actually answers;
3. the repository's own scripts, ``deploy/kafka/kafka.sh`` and ``deploy/postgres/postgres.sh``
   (no Docker needed). A server these scripts start is stopped at the end of the session,
   by the last pytest process using it (pytest-xdist workers share one); one that was
   already running is left alone.

When none works the fixture fails the tests (``pytest.fail``): a missing server is an
error, never a skip.

``kafka_cluster3`` is apart: a replicated cluster of three KRaft nodes for the failover test,
which kills and restarts its brokers, so it is always the fixture's own (``kafka.sh`` with
``KAFKA_BROKERS=3`` on ``MAHJONG_KAFKA3_PORT``, default 19192 to 19197), fresh, and stopped
when the module that uses it ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "deploy" / "kafka" / "kafka.sh"
POSTGRES_SH = REPO / "deploy" / "postgres" / "postgres.sh"

# Fetching the broker (about 45 MB from Maven Central) plus its start; generous for slow CI.
SCRIPT_TIMEOUT_S = 900


def _tcp_reachable(host: str, port: int, timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _docker_reachable() -> bool:
    try:
        import docker  # installed with testcontainers
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=5)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


# --- path 3: the deploy/ scripts, shared between pytest processes ---------------------------


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run_script(
    script: Path, action: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), action],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_S,
        check=False,
    )


@contextlib.contextmanager
def _script_server(name: str, script: Path) -> Iterator[str]:
    """Start (or reuse) a server with a deploy/ script; yields what `up` prints last.

    A small state directory records which pytest processes use the server and whether a
    fixture started it; the last user stops it, and only if a fixture started it.
    """
    state = Path(tempfile.gettempdir()) / f"mahjong-planet-fixture-{name}-{os.getuid()}"
    lock, users_file, owned_flag = state / "lock", state / "users", state / "started-by-fixture"
    me = os.getpid()

    def users() -> set[int]:
        try:
            pids = {int(p) for p in users_file.read_text().split()}
        except (FileNotFoundError, ValueError):
            return set()
        return {p for p in pids if _pid_alive(p)}

    def save(pids: set[int]) -> None:
        users_file.write_text("".join(f"{p}\n" for p in sorted(pids)))

    with _locked(lock):
        was_running = _run_script(script, "status").returncode == 0
        # A server the tests start begins empty, whatever earlier runs left on this machine.
        up = _run_script(script, "up", None if was_running else {"KAFKA_FRESH": "1"})
        if up.returncode != 0:
            raise RuntimeError(
                f"{script.relative_to(REPO)} up failed (exit {up.returncode}):\n"
                f"{up.stderr}{up.stdout}"
            )
        if not was_running:
            owned_flag.touch()
        save(users() | {me})
    address = up.stdout.strip().splitlines()[-1]
    try:
        yield address
    finally:
        with _locked(lock):
            remaining = users() - {me}
            save(remaining)
            if not remaining and owned_flag.exists():
                _run_script(script, "down")
                owned_flag.unlink(missing_ok=True)


# --- the fixtures ---------------------------------------------------------------------------


def _first_that_works(
    what: str, attempts: list[tuple[str, Callable[[], contextlib.AbstractContextManager[str]]]]
) -> Iterator[str]:
    errors: list[str] = []
    for label, make in attempts:
        stack = contextlib.ExitStack()
        try:
            value = stack.enter_context(make())
        except Exception as exc:
            stack.close()
            errors.append(f"- {label}: {type(exc).__name__}: {exc}")
            continue
        with stack:
            yield value
        return
    pytest.fail(
        f"no {what} for the integration tests; tried:\n" + "\n".join(errors),
        pytrace=False,
    )


@contextlib.contextmanager
def _kafka_testcontainer() -> Iterator[str]:
    try:
        from testcontainers.community.kafka import KafkaContainer
    except ImportError:  # testcontainers < 4.14
        from testcontainers.kafka import KafkaContainer

    image = os.environ.get("MAHJONG_KAFKA_IMAGE", "confluentinc/cp-kafka:7.6.0")
    container: Any = KafkaContainer(image).with_kraft()
    # One broker: the transaction coordinator needs its state topic at RF 1 / min.isr 1,
    # or a transactional producer hangs at start.
    for key, value in {
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS": "1",
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
    }.items():
        container.with_env(key, value)
    with container as kafka:
        yield kafka.get_bootstrap_server()


@contextlib.contextmanager
def _postgres_testcontainer() -> Iterator[str]:
    try:
        from testcontainers.community.postgres import PostgresContainer
    except ImportError:  # testcontainers < 4.14
        from testcontainers.postgres import PostgresContainer

    image = os.environ.get("MAHJONG_PG_IMAGE", "postgres:16")
    with PostgresContainer(
        image, username="mahjong", password="mahjong", dbname="mahjong", driver=None
    ) as pg:
        yield pg.get_connection_url(driver=None)


@contextlib.contextmanager
def _from_env(var: str, host_port: Callable[[str], tuple[str, int]]) -> Iterator[str]:
    value = os.environ[var]
    host, port = host_port(value)
    if not _tcp_reachable(host, port):
        pytest.fail(f"{var}={value} is set but {host}:{port} does not answer", pytrace=False)
    yield value


def _bootstrap_host_port(servers: str) -> tuple[str, int]:
    host, _, port = servers.split(",")[0].strip().rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port or 9092)


def _dsn_host_port(dsn: str) -> tuple[str, int]:
    parts = urlsplit(dsn)
    return parts.hostname or "127.0.0.1", parts.port or 5432


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """``host:port`` of a Kafka broker that accepts aiokafka's transactional requests."""
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        with _from_env("KAFKA_BOOTSTRAP_SERVERS", _bootstrap_host_port) as value:
            yield value
        return
    attempts: list[tuple[str, Callable[[], contextlib.AbstractContextManager[str]]]] = []
    if _docker_reachable():
        attempts.append(("testcontainers (Docker)", _kafka_testcontainer))
    attempts.append(("deploy/kafka/kafka.sh", lambda: _script_server("kafka", KAFKA_SH)))
    yield from _first_that_works("Kafka broker", attempts)


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """``postgresql://user:password@host:port/db`` of a PostgreSQL database to use freely."""
    if os.environ.get("MAHJONG_PG_DSN"):
        with _from_env("MAHJONG_PG_DSN", _dsn_host_port) as value:
            yield value
        return
    attempts: list[tuple[str, Callable[[], contextlib.AbstractContextManager[str]]]] = []
    if _docker_reachable():
        attempts.append(("testcontainers (Docker)", _postgres_testcontainer))
    attempts.append(
        ("deploy/postgres/postgres.sh", lambda: _script_server("postgres", POSTGRES_SH))
    )
    yield from _first_that_works("PostgreSQL", attempts)


# --- three brokers ---------------------------------------------------------------------------

KAFKA3_LOCK_WAIT_S = 600.0


@dataclass(frozen=True)
class KafkaCluster:
    """Three KRaft nodes (each broker and controller) run by ``kafka.sh`` with
    ``KAFKA_BROKERS=3``; node ``n`` is broker id ``n``."""

    bootstrap: str
    env: dict[str, str]
    run_dir: Path

    def controller(self) -> int | None:
        """The active KRaft controller's node id, as the nodes' quorum state files say (the
        newest epoch's leader); None when none says."""
        best: tuple[int, int] | None = None
        for node in self.nodes:
            state = self.run_dir / f"node{node}" / "data" / "__cluster_metadata-0" / "quorum-state"
            try:
                data = json.loads(state.read_text())
            except (OSError, ValueError):
                continue
            if data.get("leaderId", -1) >= 0 and (best is None or data["leaderEpoch"] > best[0]):
                best = (int(data["leaderEpoch"]), int(data["leaderId"]))
        return best[1] if best else None

    @property
    def nodes(self) -> dict[int, str]:
        """Broker id -> its ``host:port``."""
        return dict(enumerate(self.bootstrap.split(","), start=1))

    def _script(self, *argv: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["bash", str(KAFKA_SH), *argv],
            env={**os.environ, **self.env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"kafka.sh {' '.join(argv)} failed:\n{done.stderr[-3000:]}")
        return done

    def kill(self, node: int) -> int:
        """``kill -9`` broker ``node``; returns the pid it had."""
        return int(self._script("kill", str(node)).stdout.split()[-1])

    def start(self, node: int) -> None:
        """Start broker ``node`` again (its data kept); returns once every node is listed."""
        self._script("start", str(node))

    def pid(self, node: int) -> int | None:
        done = subprocess.run(
            ["bash", str(KAFKA_SH), "pid", str(node)],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=False,
        )
        return int(done.stdout) if done.returncode == 0 else None


@pytest.fixture(scope="module")
def kafka_cluster3() -> Iterator[KafkaCluster]:
    """A fresh three-broker cluster of this test module's own; stopped when the module ends.

    One pytest session at a time uses it (a lock file; another waits up to ten minutes), and
    whatever a killed earlier run left on its ports is stopped and wiped first.
    """
    port = int(os.environ.get("MAHJONG_KAFKA3_PORT", "19192"))
    run_dir = Path(f"/tmp/mahjong-planet-kafka-{port}-x3")  # kafka.sh's default, said out
    env = {"KAFKA_BROKERS": "3", "KAFKA_PORT": str(port), "KAFKA_RUN_DIR": str(run_dir)}
    lock = Path(tempfile.gettempdir()) / f"mahjong-planet-fixture-kafka3-{port}-{os.getuid()}"
    with lock.open("a+") as fh:
        deadline = time.monotonic() + KAFKA3_LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"another test session has held the three-broker cluster on port "
                        f"{port} for {KAFKA3_LOCK_WAIT_S:.0f} s; set MAHJONG_KAFKA3_PORT",
                        pytrace=False,
                    )
                time.sleep(1.0)
        try:
            _run_script(KAFKA_SH, "down", env)  # a leftover of a killed run, if any
            up = _run_script(KAFKA_SH, "up", {**env, "KAFKA_FRESH": "1"})
            if up.returncode != 0:
                _run_script(KAFKA_SH, "down", env)
                pytest.fail(
                    f"could not start three Kafka brokers (KAFKA_BROKERS=3 kafka.sh up, "
                    f"exit {up.returncode}):\n{up.stderr[-4000:]}{up.stdout[-1000:]}",
                    pytrace=False,
                )
            try:
                yield KafkaCluster(up.stdout.strip().splitlines()[-1], env, run_dir)
            finally:
                _run_script(KAFKA_SH, "down", env)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
