#!/usr/bin/env python3
"""The distributed mode on one machine, without Docker: every service its own process.

    deploy/cluster.py up [--kafka HOST:PORT] [--postgres DSN] [--dir cluster] [--restart]
    deploy/cluster.py status
    deploy/cluster.py down
    deploy/cluster.py supervise ...      (what `up` runs in the background)

``up`` starts a small supervisor in the background and waits until every service answers
``/readyz``. The supervisor starts each service as ``python -m services.cli <service>
--kafka ... --metrics-port N``, appends its output (JSON log lines) to
``<dir>/logs/<service>.log``, keeps its pid in ``<dir>/run/<service>.pid``, and with
``--restart`` starts a service again when it dies. On SIGTERM it stops the services in
reverse order (SIGTERM, then waits; SIGKILL only after ``--stop-timeout``) and exits.
``down`` sends the supervisor SIGTERM and waits, then stops by pid whatever is left.

The supervisor also writes ``<dir>/prometheus/targets.json``, every service's /metrics
address for Prometheus's file discovery (deploy/prometheus/cluster.yml).

``make cluster`` / ``make cluster-down`` wrap this with the broker, the database and
Prometheus (deploy/kafka/kafka.sh, deploy/postgres/postgres.sh,
deploy/prometheus/prometheus.sh). Standard library only; the test
``tests/integration/test_cluster.py`` drives ``Cluster`` directly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "cluster"
DEFAULT_KAFKA = "127.0.0.1:19092"
DEFAULT_POSTGRES = "postgresql://mahjong:mahjong@127.0.0.1:15432/mahjong"
METRICS_BASE = 9101
GATEWAY_PORT = 8000

SERVICES = (
    "table",
    "clock",
    "bots",
    "matchmaking",
    "lobby-projector",
    "rating",
    "history",
    "analysis",
    "gateway",
)
"""Every service, in start order (stopped in reverse)."""

SCALABLE = ("table", "clock", "bots")
"""Services that share partitions of table.commands / table.events: run several."""


@dataclass(frozen=True, slots=True)
class Instance:
    """One service process: its name (``table``, ``table-2``), its service and its port."""

    name: str
    service: str
    port: int  # the metrics port; the gateway's HTTP port for the gateway

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):  # a zombie (our own child, not reaped yet) is gone
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if fields and fields[0] == "Z":
            return False
    return True


def get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """``GET url``: status and body (status 0 when nothing answers)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()
    except (OSError, urllib.error.URLError):
        return 0, b""


@dataclass
class Cluster:
    """The services of one machine's distributed mode, as child processes."""

    root: Path = DEFAULT_DIR
    kafka: str = DEFAULT_KAFKA
    postgres: str = DEFAULT_POSTGRES
    metrics_base: int = METRICS_BASE
    gateway_port: int = GATEWAY_PORT
    host: str = "127.0.0.1"
    scale: Mapping[str, int] = field(default_factory=dict)
    extra_args: Mapping[str, Sequence[str]] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    python: str = field(default_factory=_python)
    ports: Mapping[str, int] = field(default_factory=dict)  # name -> port, overrides
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    # --- layout -------------------------------------------------------------------------

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    def instances(self) -> list[Instance]:
        out: list[Instance] = []
        port = self.metrics_base
        for service in SERVICES:
            count = max(1, int(self.scale.get(service, 1))) if service in SCALABLE else 1
            for i in range(count):
                name = service if i == 0 else f"{service}-{i + 1}"
                if service == "gateway":
                    chosen = self.ports.get(name, self.gateway_port)
                else:
                    chosen = self.ports.get(name, port)
                    port += 1
                out.append(Instance(name, service, chosen))
        return out

    def instance(self, name: str) -> Instance:
        for i in self.instances():
            if i.name == name:
                return i
        raise KeyError(f"no service {name!r}; one of {', '.join(self.names())}")

    def names(self) -> list[str]:
        return [i.name for i in self.instances()]

    def command(self, name: str) -> list[str]:
        """The command line of one service process."""
        inst = self.instance(name)
        argv = [self.python, "-m", "services.cli", inst.service, "--kafka", self.kafka]
        if inst.service == "gateway":
            argv += ["--host", self.host, "--port", str(inst.port)]
        else:
            argv += ["--metrics-port", str(inst.port), "--metrics-host", self.host]
        if inst.service in ("rating", "lobby-projector", "history"):
            argv += ["--postgres", self.postgres]
        argv += ["--log-format", "json", *self.extra_args.get(inst.service, ())]
        return argv

    def environment(self) -> dict[str, str]:
        env = {**os.environ, **self.env}
        env["PYTHONUNBUFFERED"] = "1"
        env["MAHJONG_POSTGRES_DSN"] = self.postgres  # the gateway's accounts and ratings
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        env.pop("KAFKA_BOOTSTRAP_SERVERS", None)  # --kafka says it
        return env

    @property
    def targets_file(self) -> Path:
        """Prometheus's file discovery of this cluster (deploy/prometheus/cluster.yml)."""
        return self.root / "prometheus" / "targets.json"

    def scrape_targets(self, names: Sequence[str] | None = None) -> list[dict[str, object]]:
        """One Prometheus target group per service process: its /metrics address, with the
        service as ``job`` (every instance of a scaled service under one job, as the alerts
        and dashboards expect) and the process's name as ``process``."""
        chosen = set(names) if names is not None else None
        return [
            {
                "targets": [f"{self.host}:{inst.port}"],
                "labels": {"job": inst.service, "process": inst.name},
            }
            for inst in self.instances()
            if chosen is None or inst.name in chosen
        ]

    def write_targets(self, names: Sequence[str] | None = None) -> Path:
        """Write :meth:`scrape_targets` where the cluster's Prometheus reads them (atomically:
        Prometheus re-reads the file when it changes)."""
        path = self.targets_file
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".json.part")
        part.write_text(json.dumps(self.scrape_targets(names), indent=2) + "\n")
        part.replace(path)
        return path

    def pid_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid"

    def log_file(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    # --- processes -----------------------------------------------------------------------

    def create_topics(self, timeout: float = 120) -> None:
        """``mahjong-planet topics`` against the broker (idempotent)."""
        subprocess.run(
            [self.python, "-m", "services.cli", "topics", "--kafka", self.kafka],
            cwd=REPO,
            env=self.environment(),
            check=True,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
        )

    def start(self, name: str) -> subprocess.Popen[bytes]:
        """Start one service; its output goes to ``logs/<name>.log``, its pid to a file."""
        old = self.procs.get(name)
        if old is not None and old.poll() is None:
            raise RuntimeError(f"{name} is already running (pid {old.pid})")
        self.logs.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with self.log_file(name).open("ab") as out:
            proc = subprocess.Popen(
                self.command(name),
                cwd=self.root,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a terminal's Ctrl-C goes to the supervisor only
            )
        self.procs[name] = proc
        self.pid_file(name).write_text(f"{proc.pid}\n")
        return proc

    def start_all(self) -> None:
        for name in self.names():
            self.start(name)

    def stop(self, name: str, timeout: float = 30.0) -> int | None:
        """SIGTERM, wait up to ``timeout``, then SIGKILL. The exit code (None: not ours)."""
        proc = self.procs.get(name)
        code: int | None = None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    code = proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = proc.wait()
            else:
                code = proc.returncode
        else:
            stop_pid(self.pid_file(name), timeout)
        self.pid_file(name).unlink(missing_ok=True)
        return code

    def stop_all(self, timeout: float = 30.0) -> dict[str, int | None]:
        return {name: self.stop(name, timeout) for name in reversed(self.names())}

    def exited(self) -> dict[str, int]:
        """Services started here that are no longer running, with their exit codes."""
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    # --- health ----------------------------------------------------------------------------

    def url(self, name: str, path: str) -> str:
        return self.instance(name).base + path

    def ready(self, name: str) -> bool:
        return get(self.url(name, "/readyz"))[0] == 200

    def wait_ready(self, names: Sequence[str] | None = None, timeout: float = 120.0) -> None:
        """Wait until every named service answers ``/readyz`` with 200."""
        waiting = list(names or self.names())
        deadline = time.monotonic() + timeout
        while waiting:
            waiting = [n for n in waiting if not self.ready(n)]
            for n in waiting:
                proc = self.procs.get(n)
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(
                        f"{n} exited with {proc.returncode} before it was ready; "
                        f"see {self.log_file(n)}:\n{tail(self.log_file(n))}"
                    )
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"not ready after {timeout:.0f} s: {', '.join(waiting)}")
            time.sleep(0.3)

    def metrics(self, name: str) -> str:
        status, body = get(self.url(name, "/metrics"), timeout=5)
        if status != 200:
            raise RuntimeError(f"{name}: /metrics answered {status}")
        return body.decode()


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def stop_pid(pid_file: Path, timeout: float) -> None:
    """Stop a process we did not start (``down``): SIGTERM, wait, then SIGKILL."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    if not _alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# --- the supervisor ---------------------------------------------------------------------------


def supervise(cluster: Cluster, restart: bool, stop_timeout: float) -> int:
    """Start everything, restart what dies (``restart``), stop everything on SIGTERM."""
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cluster.run_dir.mkdir(parents=True, exist_ok=True)
    (cluster.run_dir / "supervisor.pid").write_text(f"{os.getpid()}\n")
    say(f"starting {', '.join(cluster.names())} (logs in {cluster.logs})")
    cluster.write_targets()
    cluster.start_all()
    backoff: dict[str, float] = {}
    due: dict[str, float] = {}
    started = dict.fromkeys(cluster.names(), time.monotonic())
    while not stopping:
        time.sleep(0.5)
        for name, code in cluster.exited().items():
            if not restart:
                if name not in due:
                    say(f"{name} exited with {code}; not restarted (no --restart)")
                    due[name] = float("inf")
                continue
            if name not in due:
                if time.monotonic() - started.get(name, 0.0) > 60:
                    backoff.pop(name, None)  # it ran a good while: not a crash loop
                wait = backoff[name] = min(30.0, backoff.get(name, 0.5) * 2)
                due[name] = time.monotonic() + wait
                say(f"{name} exited with {code}; restarting in {wait:.0f} s")
            elif time.monotonic() >= due[name]:
                del due[name]
                cluster.start(name)
                started[name] = time.monotonic()
    say("stopping every service (SIGTERM)")
    codes = cluster.stop_all(stop_timeout)
    say("stopped: " + ", ".join(f"{n} exit {c}" for n, c in codes.items()))
    (cluster.run_dir / "supervisor.pid").unlink(missing_ok=True)
    return 0


def say(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(json.dumps({"ts": stamp, "logger": "cluster", "msg": message}), flush=True)


# --- the command line ---------------------------------------------------------------------------


def _scale(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, count = part.partition("=")
        if name not in SCALABLE or not count.isdigit() or int(count) < 1:
            raise argparse.ArgumentTypeError(f"--scale takes e.g. table=2,bots=2 ({SCALABLE})")
        out[name] = int(count)
    return out


def _cluster(args: argparse.Namespace) -> Cluster:
    return Cluster(
        root=Path(args.dir).resolve(),
        kafka=args.kafka,
        postgres=args.postgres,
        metrics_base=args.metrics_base,
        gateway_port=args.gateway_port,
        host=args.host,
        scale=args.scale,
        extra_args={"bots": ["--pace", args.bot_pace]} if args.bot_pace else {},
    )


def _supervisor_pid(cluster: Cluster) -> int | None:
    try:
        pid = int((cluster.run_dir / "supervisor.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if _alive(pid) else None


def cmd_up(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    if _supervisor_pid(cluster):
        print(f"already running (supervisor pid {_supervisor_pid(cluster)}); see `status`")
        return 0
    cluster.create_topics()
    cluster.logs.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "supervise", *sys.argv[2:]]
    if "--dir" not in sys.argv:
        argv += ["--dir", str(cluster.root)]
    with (cluster.logs / "supervisor.log").open("ab") as out:
        subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        cluster.wait_ready(timeout=args.timeout)
    except (TimeoutError, RuntimeError) as exc:
        print(f"cluster.py: {exc}\nlogs: {cluster.logs}", file=sys.stderr)
        return 1
    cmd_status(args)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    pid = _supervisor_pid(cluster)
    print(f"supervisor: {'pid ' + str(pid) if pid else 'not running'}; logs in {cluster.logs}")
    all_ready = True
    for inst in cluster.instances():
        try:
            service_pid = int(cluster.pid_file(inst.name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            service_pid = 0
        alive = bool(service_pid) and _alive(service_pid)
        ready = alive and cluster.ready(inst.name)
        all_ready &= ready
        state = "ready" if ready else ("running" if alive else "stopped")
        print(
            f"  {inst.name:<16} {state:<8} pid {service_pid or '-':<8} "
            f"{inst.base}/{'metrics'}  log {cluster.log_file(inst.name)}"
        )
    return 0 if all_ready else 1


def cmd_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    pid = _supervisor_pid(cluster)
    if pid:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + args.stop_timeout * 2 + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
    for pid_file in sorted(cluster.run_dir.glob("*.pid")) if cluster.run_dir.exists() else []:
        stop_pid(pid_file, args.stop_timeout)  # anything the supervisor left behind
        pid_file.unlink(missing_ok=True)
    print("cluster.py: every service stopped")
    return 0


def cmd_supervise(args: argparse.Namespace) -> int:
    return supervise(_cluster(args), args.restart, args.stop_timeout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deploy/cluster.py",
        description="Every Mahjong Planet service as its own process on this machine, on "
        "Kafka and PostgreSQL, under a small supervisor. Logs: <dir>/logs/<service>.log; "
        "pids: <dir>/run/<service>.pid.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    helps = {
        "up": "create the topics, start the supervisor in the background, wait until ready",
        "status": "which services run and answer /readyz (exit 1 unless all do)",
        "down": "stop every service (SIGTERM, then wait) and the supervisor",
        "supervise": "run the supervisor in the foreground (what `up` starts)",
    }
    funcs = {"up": cmd_up, "status": cmd_status, "down": cmd_down, "supervise": cmd_supervise}
    for name, text in helps.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--dir", default=str(DEFAULT_DIR), help="state folder (default ./cluster)")
        p.add_argument("--kafka", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", DEFAULT_KAFKA))
        p.add_argument(
            "--postgres", default=os.environ.get("MAHJONG_POSTGRES_DSN", DEFAULT_POSTGRES)
        )
        p.add_argument("--host", default="127.0.0.1", help="address services listen on")
        p.add_argument("--metrics-base", type=int, default=METRICS_BASE)
        p.add_argument("--gateway-port", type=int, default=GATEWAY_PORT)
        p.add_argument("--scale", type=_scale, default={}, help="e.g. table=2,bots=2")
        p.add_argument("--bot-pace", choices=["instant", "fast", "normal", "slow"])
        p.add_argument("--restart", action="store_true", help="restart a service that dies")
        p.add_argument("--stop-timeout", type=float, default=30.0)
        p.add_argument("--timeout", type=float, default=180.0, help="`up`: wait for ready")
        p.set_defaults(func=funcs[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


@contextlib.contextmanager
def running(cluster: Cluster, timeout: float = 180.0) -> Iterator[Cluster]:
    """Every service started and ready; stopped (SIGTERM) on the way out."""
    cluster.start_all()
    try:
        cluster.wait_ready(timeout=timeout)
        yield cluster
    finally:
        cluster.stop_all()


if __name__ == "__main__":
    raise SystemExit(main())
