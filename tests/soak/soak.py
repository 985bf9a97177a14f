"""The soak with faults (issue 10): play for a while and break things, then prove nothing broke.

    python -m tests.soak.soak [--minutes 30] [--kill-every 60] [--json soak-results.json]

It starts its own fresh Kafka broker and PostgreSQL with the project's scripts
(``deploy/kafka/kafka.sh``, ``deploy/postgres/postgres.sh``, on ``--kafka-port`` /
``--pg-port``), every service as its own process (``deploy/cluster.py``'s ``Cluster``), and
WebSocket players that play through the gateway like the web client, at a human pace:

- rated private tables of four guests with a timed clock (blitz by default, 2 hands),
- Quick Play groups of four guests (rated, standard clock, 4 hands),
- casual bullet tables of one guest and three computers (the bots service).

For ``--minutes`` it keeps that traffic going while it ``kill -9``s a random service about
every ``--kill-every`` seconds (restarting it after 1-5 s, as a supervisor would), restarts
the broker once (at a third of the run) and PostgreSQL once (at two thirds). Half-way it
SIGSTOPs the table service, lets a second table member take every partition over and wakes
the first: the second must never be fenced (no failed transaction). Before the broker
starts, it runs ``mahjong-planet run`` twice on one data directory: the second must exit at
once with its message, and the first play on alone with a log that audits clean. Players
reconnect with the last seq they hold when the gateway dies, and resend a command with the
same id when its decision is still open. Then the traffic stops, every table plays to its
end, the consumers catch up (``mahjong_consumer_lag`` 0 everywhere), and it verifies:

a. every hand in ``table.events`` ended (none stuck), including those in flight at a fault;
b. ``mahjong-planet audit`` passes on every hand;
c. per hand, seqs are exactly 1..n in log order (no event lost or repeated), every command's
   events form one run (no command applied twice), each rated hand has exactly one result on
   ``rating.results``, and what each player's socket received matches the log;
d. ``mahjong-planet ratings recompute`` equals the live ratings, bit for bit, with every
   result applied and more than zero rated hands;
e. every Quick Play player was seated exactly once (``lobby.events``);
f. the hand history (written through the PostgreSQL restart) equals the log: every ended hand
   exactly once with its four rows, and ``mahjong-planet history rebuild`` is identical.
f. a poison record on each input topic (``poison_each_input``, a third into the run: a NUL
   in an id, points beyond int32, a wait of 10^30 s) was set aside with its reason and the
   services went on.

It writes the figures to ``--json`` and a summary to stdout, and exits 1 on any failure.
External servers (``KAFKA_BOOTSTRAP_SERVERS``, ``MAHJONG_POSTGRES_DSN``) are not used: the
soak restarts its servers itself and needs an empty broker (a second table-service group on
an old history would decide it all again), so it refuses a port where a server already runs.
``run_soak(SoakConfig(...))`` is the same run for ``tests/integration/test_soak.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import websockets

from services.bots import make_bot
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing, partition_for
from services.runtime.ops import scrape
from services.runtime.topics import LOBBY_EVENTS, RATING_RESULTS, TABLE_EVENTS
from tests.cluster_support import cluster_module, free_ports
from tests.service.gateway_harness import seat_view

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "deploy" / "kafka" / "kafka.sh"
POSTGRES_SH = REPO / "deploy" / "postgres" / "postgres.sh"
LAG_SERVICES = ("table", "clock", "bots", "matchmaking", "rating", "lobby-projector", "history")
HTTP_RETRY = (429, 500, 502, 503, 504)


class SoakError(RuntimeError):
    """The soak could not run (a server in the way, a service that never came up)."""


@dataclass
class SoakConfig:
    minutes: float = 30.0  # traffic and faults; the drain and checks come after
    kill_every_s: float = 60.0
    # The faults go on past ``minutes`` until this many kills and both planned server
    # restarts are done: on a busy machine one restart can hold the loop for a minute.
    min_kills: int = 0
    kafka_port: int = 29092
    pg_port: int = 25432
    workdir: Path = Path("/tmp/mahjong-planet-soak")
    rated_tables: int = 2  # concurrent private rated tables of four guests
    rated_clock: str = "blitz"
    quick_play_groups: int = 1  # concurrent Quick Play groups of four guests
    computer_tables: int = 2  # concurrent casual bullet tables, one guest and three computers
    think_s: tuple[float, float] = (0.3, 1.5)  # a player's time to decide
    restart_after_s: tuple[float, float] = (1.0, 5.0)
    broker_restart_at: float = 1 / 3  # fractions of the run
    postgres_restart_at: float = 2 / 3
    drain_timeout_s: float = 900.0
    hand_timeout_s: float = 420.0  # a client gives up on a hand after this long
    seed: int | None = None
    keep_data: bool = False  # keep the broker's and database's data after a pass


# --- the servers -----------------------------------------------------------------------------


class Servers:
    """This soak's own broker and database, started and restarted with the deploy scripts."""

    def __init__(self, kafka_port: int, pg_port: int) -> None:
        self.kafka_dir = Path(f"/tmp/mahjong-planet-kafka-{kafka_port}")
        self.pg_dir = Path(f"/tmp/mahjong-planet-pg-{pg_port}")
        self.kafka_env = {"KAFKA_PORT": str(kafka_port), "KAFKA_RUN_DIR": str(self.kafka_dir)}
        self.pg_env = {"PG_PORT": str(pg_port), "PG_DATA_DIR": str(self.pg_dir)}
        self.started: set[str] = set()

    @staticmethod
    def _run(script: Path, action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "PG_"))}
        return subprocess.run(
            ["bash", str(script), action],
            env={**base, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    def _up(self, script: Path, env: dict[str, str]) -> str:
        r = self._run(script, "up", env)
        if r.returncode != 0:
            raise SoakError(f"{script.name} up failed ({r.returncode}):\n{r.stderr[-2000:]}")
        return r.stdout.strip().splitlines()[-1]

    def check_free(self) -> None:
        for script, env, what in (
            (KAFKA_SH, self.kafka_env, f"a broker on port {self.kafka_env['KAFKA_PORT']}"),
            (POSTGRES_SH, self.pg_env, f"PostgreSQL on port {self.pg_env['PG_PORT']}"),
        ):
            if self._run(script, "status", env).returncode == 0:
                raise SoakError(
                    f"{what} is already running. The soak restarts its servers and needs them "
                    "empty, so it starts its own: stop that one or choose another port "
                    "(--kafka-port / --pg-port)."
                )

    def kafka_up(self, fresh: bool = False) -> str:
        self.started.add("kafka")
        return self._up(KAFKA_SH, {**self.kafka_env, "KAFKA_FRESH": "1" if fresh else "0"})

    def kafka_down(self) -> None:
        self._run(KAFKA_SH, "down", self.kafka_env)

    def pg_up(self, fresh: bool = False) -> str:
        if fresh:
            shutil.rmtree(self.pg_dir, ignore_errors=True)
        self.started.add("postgres")
        return self._up(POSTGRES_SH, self.pg_env)

    def pg_down(self) -> None:
        self._run(POSTGRES_SH, "down", self.pg_env)

    def stop(self, remove_data: bool) -> None:
        if "kafka" in self.started:
            self.kafka_down()
        if "postgres" in self.started:
            self.pg_down()
        if remove_data:
            shutil.rmtree(self.kafka_dir, ignore_errors=True)
            shutil.rmtree(self.pg_dir, ignore_errors=True)


# --- the players -----------------------------------------------------------------------------


class Player:
    """A guest on the REST API, from its own (forwarded) address, retrying through faults."""

    def __init__(self, soak: Soak, address: str) -> None:
        self.soak = soak
        self.address = address
        self.http = httpx.AsyncClient(
            base_url=soak.gateway_url, timeout=20, headers={"x-forwarded-for": address}
        )
        self.id = ""
        self.token = ""

    @property
    def auth(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    async def call(
        self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)
    ) -> httpx.Response:
        """The response once its status is in ``ok``; transport errors, 5xx, 429 and 401
        (the session store may be down) are retried for up to three minutes."""
        deadline = time.monotonic() + 180
        pause = 0.5
        while True:
            try:
                r = await self.http.request(method, path, json=body, headers=self.auth)
                if r.status_code in ok:
                    return r
                problem = f"{r.status_code} {r.text[:200]}"
                retry = r.status_code in HTTP_RETRY or (r.status_code == 401 and self.token)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}"
                retry = not isinstance(exc, httpx.LocalProtocolError)  # ours: no use retrying
            self.soak.stats[f"http_retry {method} {re.sub(r'/t-[^/]+', '/{id}', path)}"] += 1
            if not retry or time.monotonic() > deadline:
                raise AssertionError(f"{method} {path}: {problem}")
            await asyncio.sleep(pause)
            pause = min(5.0, pause * 1.5)

    async def sign_in(self) -> Player:
        r = await self.call("POST", "/api/auth/guest", ok=(201,))
        self.token, self.id = r.json()["token"], r.json()["account"]["id"]
        return self

    async def me(self) -> dict[str, Any]:
        body: dict[str, Any] = (await self.call("GET", "/api/me")).json()
        return body

    async def close(self) -> None:
        await self.http.aclose()


@dataclass
class HandSeen:
    """What one player's socket received of one hand."""

    player: str
    hand_id: str
    events: dict[int, str] = field(default_factory=dict)  # seq -> type ("hidden:<type>")
    first_seen: float = 0.0
    ended_at: float | None = None


class SeatClient:
    """One player's socket at one table: plays ``hands`` hands with a bot's choices at a
    human pace; when the socket drops it reconnects with the hand and the last seq it holds."""

    def __init__(self, soak: Soak, player: Player, table_id: str, hands: int) -> None:
        self.soak = soak
        self.player = player
        self.table_id = table_id
        self.hands = hands
        self.seen: dict[str, HandSeen] = {}
        self.ended: list[str] = []
        self.hand_id: str | None = None
        self.view: dict[str, Any] | None = None
        self.sent: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
        self.bot = make_bot("easy")
        self.n = 0

    def last_seq(self) -> int:
        held = self.seen[self.hand_id].events if self.hand_id in self.seen else {}
        n = 0
        while n + 1 in held:
            n += 1
        return n

    async def play(self) -> bool:
        deadline = time.monotonic() + self.hands * self.soak.config.hand_timeout_s
        first = True
        while len(self.ended) < self.hands:
            if time.monotonic() > deadline:
                self.soak.stuck.append(
                    {"table_id": self.table_id, "player": self.player.id, "hand": self.hand_id,
                     "ended": len(self.ended), "of": self.hands, "last_seq": self.last_seq()}
                )  # fmt: skip
                return False
            if not first:
                self.soak.stats["ws_reconnect_attempts"] += 1
                await asyncio.sleep(random.uniform(0.2, 1.0))
            first = False
            try:
                async with websockets.connect(
                    self.soak.ws_url,
                    max_size=2**22,
                    open_timeout=10,
                    additional_headers={"x-forwarded-for": self.player.address},
                ) as ws:
                    self.soak.stats["ws_sessions"] += 1
                    await self._session(ws, deadline)
            except (OSError, TimeoutError, websockets.WebSocketException) as exc:
                self.soak.stats[f"ws_drop {type(exc).__name__}"] += 1
        return True

    async def _session(self, ws: Any, deadline: float) -> None:
        hello: dict[str, Any] = {
            "type": "hello",
            "token": self.player.token,
            "table_id": self.table_id,
        }
        if self.hand_id is not None:
            hello |= {"hand_id": self.hand_id, "last_seq": self.last_seq()}
        await ws.send(json.dumps(hello))
        self.view = None
        answered: set[tuple[str, int]] = set()  # on this connection
        answer_at: float | None = None
        while len(self.ended) < self.hands and time.monotonic() < deadline:
            wait = 30.0 if answer_at is None else max(0.0, answer_at - time.monotonic())
            try:
                raw = await asyncio.wait_for(ws.recv(), wait)
            except TimeoutError:
                if answer_at is not None and self.view is not None:
                    answer_at = None
                    key = (self.view["hand_id"], self.view["decision_seq"])
                    if key not in answered:
                        answered.add(key)
                        await self._answer(ws, key)
                continue
            frame = json.loads(raw)
            kind = frame.get("type")
            if kind == "events":
                self._events(frame)
            elif kind == "view":
                self.view = frame
                key = (frame["hand_id"], frame["decision_seq"])
                mine = bool(frame["view"].get("legal_actions"))
                if mine and key not in answered and frame["hand_id"] not in self.ended:
                    resend = key in self.sent
                    think = 0.05 if resend else random.uniform(*self.soak.config.think_s)
                    answer_at = time.monotonic() + think
                else:
                    answer_at = None
            elif kind == "rejected":
                self.soak.stats[f"rejected {frame.get('code')}"] += 1
            elif kind == "error":
                self.soak.stats[f"ws_error {frame.get('code')}"] += 1

    def _events(self, frame: dict[str, Any]) -> None:
        hand_id = frame["hand_id"]
        if hand_id != self.hand_id:
            self.hand_id = hand_id
        seen = self.seen.setdefault(
            hand_id, HandSeen(self.player.id, hand_id, first_seen=time.time())
        )
        for e in frame["events"]:
            kind = e["type"] if e["type"] != "hidden" else f"hidden:{e.get('event')}"
            seen.events[e["seq"]] = kind
            if e["type"] == "hand_ended" and hand_id not in self.ended:
                self.ended.append(hand_id)
                seen.ended_at = time.time()

    async def _answer(self, ws: Any, key: tuple[str, int]) -> None:
        assert self.view is not None
        if key in self.sent:  # the same decision after a reconnect: the same command again
            command_id, body = self.sent[key]
            self.soak.stats["commands_resent"] += 1
        else:
            command = self.bot.act(seat_view(self.view))
            body = msgspec.to_builtins(command)
            for k in ("seat", "table_id", "command_id", "hand_id", "decision_seq"):
                body.pop(k, None)
            self.n += 1
            command_id = f"soak-{self.n}-{key[1]}"
            self.sent[key] = (command_id, body)
            self.soak.sent_commands.add(f"{self.player.id}/{command_id}")
            self.soak.stats["commands_sent"] += 1
        frame = {"type": "command", "command_id": command_id, "decision_seq": key[1], "body": body}
        await ws.send(json.dumps(frame))


# --- the soak --------------------------------------------------------------------------------


class Soak:
    def __init__(self, config: SoakConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.servers = Servers(config.kafka_port, config.pg_port)
        self.kafka = ""
        self.dsn = ""
        self.cluster: Any = None
        self.gateway_url = ""
        self.ws_url = ""
        self.t0 = time.monotonic()
        self.faults: list[dict[str, Any]] = []
        self.unexpected_exits: list[dict[str, Any]] = []
        self.restarts: Counter[str] = Counter()
        self.killed: set[str] = set()
        self.bag: list[str] = []  # the services still to kill in this round
        self.stats: Counter[str] = Counter()
        self.stuck: list[dict[str, Any]] = []
        self.client_errors: list[str] = []
        self.sent_commands: set[str] = set()
        self.seen: list[HandSeen] = []
        self.quick_players: list[str] = []
        self.tables: Counter[str] = Counter()  # kind -> tables played
        self.stop_traffic = asyncio.Event()
        self.active: set[SeatClient] = set()
        self.resumed: set[str] = set()  # hands in flight at a fault (that then finished)
        self.supervising = True
        self.poisoned: dict[str, int] = {}  # poison_each_input: topic -> offset
        self.addresses = (
            f"10.{i // 62500 % 250}.{i // 250 % 250}.{i % 250 + 1}" for i in itertools.count()
        )

    # --- bookkeeping ---

    def now(self) -> float:
        return round(time.monotonic() - self.t0, 1)

    def say(self, message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} +{self.now():7.1f}s] {message}", flush=True)

    def fault(self, kind: str, target: str, **extra: Any) -> None:
        entry = {"t": self.now(), "at": time.strftime("%Y-%m-%dT%H:%M:%S"), "kind": kind,
                 "target": target, **extra}  # fmt: skip
        self.faults.append(entry)
        self.say(f"FAULT {kind} {target} {extra or ''}")

    # --- the services ---

    async def supervise(self) -> None:
        """Start again whatever died: after 1-5 s when we killed it, else after 2 s (logged)."""
        due: dict[str, float] = {}
        while self.supervising:
            await asyncio.sleep(0.5)
            for name, code in self.cluster.exited().items():
                if name not in due:
                    if name in self.killed:
                        self.killed.discard(name)
                        due[name] = time.monotonic() + self.rng.uniform(
                            *self.config.restart_after_s
                        )
                    else:
                        log = self.cluster.log_file(name)
                        lines = log.read_text(errors="replace").splitlines()[-5:]
                        self.unexpected_exits.append(
                            {"t": self.now(), "service": name, "code": code, "log_tail": lines}
                        )
                        self.say(f"{name} exited by itself with {code}; restarting in 2 s")
                        due[name] = time.monotonic() + 2.0
                elif time.monotonic() >= due[name]:
                    del due[name]
                    self.cluster.start(name)
                    self.restarts[name] += 1

    def kill_one(self) -> bool:
        """SIGKILL a random running service: drawn from a shuffled bag of all of them, so
        every service is hit once before any is hit again. False: none was running."""
        running = [n for n, p in self.cluster.procs.items() if p.poll() is None]
        if not running:
            return False
        if not any(n in running for n in self.bag):
            self.bag = self.rng.sample(self.cluster.names(), len(self.cluster.names()))
        name = next(n for n in self.bag if n in running)
        self.bag.remove(name)
        pid = self.cluster.procs[name].pid
        self.killed.add(name)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self.fault("kill -9", name, pid=pid)
        return True

    async def restart_server(self, what: str) -> None:
        down, up = (
            (self.servers.kafka_down, self.servers.kafka_up)
            if what == "broker"
            else (self.servers.pg_down, self.servers.pg_up)
        )
        began = time.monotonic()
        self.fault(f"{what} restart", what, phase="stopping")
        await asyncio.to_thread(down)
        await asyncio.sleep(2.0)
        await asyncio.to_thread(up)
        self.fault(f"{what} restart", what, phase="up", down_s=round(time.monotonic() - began, 1))

    async def inject(self, seconds: float) -> None:
        """Kill a service about every ``kill_every_s`` and restart the broker and PostgreSQL
        once each, for ``seconds`` and then until the planned faults have all happened."""
        start = time.monotonic()
        end = start + seconds
        kills = 0
        plan = {
            "broker": start + seconds * self.config.broker_restart_at,
            "postgres": start + seconds * self.config.postgres_restart_at,
        }
        every = self.config.kill_every_s
        next_kill = start + every * self.rng.uniform(0.75, 1.25)
        while True:
            now = time.monotonic()
            if now >= end and not plan and kills >= self.config.min_kills:
                return
            due = min([next_kill, *([end] if now < end else []), *plan.values()])
            if due > now:
                await asyncio.sleep(min(due - now, 1.0))
                continue
            server = next((k for k, t in plan.items() if t <= now), None)
            if server is not None:
                del plan[server]
                await self.restart_server(server)
            elif next_kill <= now:
                kills += self.kill_one()
                next_kill = time.monotonic() + every * self.rng.uniform(0.75, 1.25)

    # --- fault: two embedded processes on one data directory (issue 17) ---

    def two_embedded_processes(self) -> dict[str, Any]:
        """``mahjong-planet run`` twice on one ``--data``: the second must exit at once with
        its message, change nothing, and the first plays on alone (its log audits clean)."""
        data = self.config.workdir / "embedded" / "data"
        shutil.rmtree(data.parent, ignore_errors=True)
        data.parent.mkdir(parents=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("KAFKA_BOOTSTRAP_SERVERS", "MAHJONG_POSTGRES_DSN", "MAHJONG_PG_DSN")
        }
        first_port, second_port = free_ports(2)

        def run(port: int, name: str) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "services.cli",
                    "run",
                    "--data",
                    str(data),
                    "--port",
                    str(port),
                    "--log-format",
                    "text",
                ],
                cwd=REPO,
                env=env,
                stdout=(data.parent / f"{name}.log").open("wb"),
                stderr=subprocess.STDOUT,
            )

        out: dict[str, Any] = {"ok": False}
        first = run(first_port, "first")
        try:
            deadline = time.monotonic() + 120
            while not _answers(f"http://127.0.0.1:{first_port}/readyz"):
                if first.poll() is not None or time.monotonic() > deadline:
                    raise SoakError("the embedded `run` did not come up")
                time.sleep(0.5)
            before = sorted(x.name for x in data.iterdir())
            self.fault("two embedded processes", "run", data=str(data))
            began = time.monotonic()
            second = run(second_port, "second")
            try:
                code: int | None = second.wait(30)
            except subprocess.TimeoutExpired:
                second.kill()
                code = None
            said = (data.parent / "second.log").read_text(errors="replace")
            out |= {
                "second_exit": code,
                "second_exit_s": round(time.monotonic() - began, 1),
                "second_said": said.strip().splitlines()[-1:] if said.strip() else [],
            }
            untouched = sorted(x.name for x in data.iterdir()) == before
            sim = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "services.cli",
                    "simulate",
                    "--data",
                    str(data),
                    "--hands",
                    "4",
                    "--tables",
                    "2",
                    "--external-table-service",
                ],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            first_alive = first.poll() is None
        finally:
            first.terminate()
            try:
                first.wait(30)
            except subprocess.TimeoutExpired:
                first.kill()
        audit = self.cli(["audit", "--data", str(data)], 300)
        summary = audit.stdout.strip().splitlines()[-1:] if audit.stdout.strip() else []
        out |= {
            "files_untouched": untouched,
            "first_played_on": sim.returncode == 0,
            "first_alive": first_alive,
            "audit": summary,
        }
        out["ok"] = (
            code not in (None, 0)
            and "in use" in said
            and untouched
            and first_alive
            and sim.returncode == 0
            and audit.returncode == 0
            and "0 failed" in audit.stdout
        )
        self.say(f"two embedded processes: {out}")
        return out

    # --- fault: a SIGSTOP'd table member while another takes over (issue 17) ---

    async def sigstopped_table_member(self, after_s: float) -> dict[str, Any]:
        """After ``after_s``: SIGSTOP the table service, let a second member take every
        partition over, SIGCONT the first. The second must never be fenced: not one failed
        transaction while the woken one gives its partitions back and rejoins."""
        await asyncio.sleep(after_s)
        out: dict[str, Any] = {"ok": False}
        paused = self.cluster.procs["table"]
        if paused.poll() is not None:
            await asyncio.sleep(10)  # just killed: let the supervisor bring it back
        paused = self.cluster.procs["table"]
        [port] = free_ports(1)
        log_path = self.cluster.logs / "table-takeover.log"
        owner = subprocess.Popen(
            [
                self.cluster.python,
                "-m",
                "services.cli",
                "table",
                "--kafka",
                self.kafka,
                "--metrics-port",
                str(port),
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log_path.open("ab"),
            env={k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"},
        )
        base = f"http://127.0.0.1:{port}"

        async def holds() -> list[int]:
            try:
                async with httpx.AsyncClient(timeout=2) as http:
                    r = await http.get(f"{base}/readyz")
                return list(r.json().get("partitions", [])) if r.status_code == 200 else []
            except (httpx.HTTPError, ValueError):
                return []

        async def failed() -> float:
            async with httpx.AsyncClient(timeout=5) as http:
                text = (await http.get(f"{base}/metrics")).text
            return sum(
                v
                for n, lb, v in scrape(text)
                if n == "mahjong_table_transactions_total" and lb.get("outcome") == "failed"
            )

        try:
            self.fault("sigstop table member", "table", pid=paused.pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(paused.pid, signal.SIGSTOP)
            deadline = time.monotonic() + 120
            while len(await holds()) < 8 and time.monotonic() < deadline:
                await asyncio.sleep(1.0)
            out["took_over"] = len(await holds()) == 8
            await asyncio.sleep(3.0)  # the new owner commits alone for a while
            with contextlib.suppress(ProcessLookupError):
                os.kill(paused.pid, signal.SIGCONT)
            self.fault("sigcont table member", "table", pid=paused.pid)
            await asyncio.sleep(20.0)  # the woken member's transactions fail; it rejoins
            out["owner_failed_transactions"] = await failed()
            fenced = [x for x in log_path.read_text(errors="replace").splitlines() if "Fenced" in x]
            out["owner_fenced_lines"] = fenced[:3]
            out["ok"] = out["took_over"] and out["owner_failed_transactions"] == 0 and not fenced
        except Exception as exc:  # reported as a failed check, the soak goes on
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(paused.pid, signal.SIGCONT)
            owner.terminate()
            await asyncio.to_thread(owner.wait, 60)
        self.say(f"sigstopped table member: {out}")
        return out

    # --- the traffic ---

    async def players(self, n: int) -> list[Player]:
        return [await Player(self, next(self.addresses)).sign_in() for _ in range(n)]

    async def play_table(self, table_id: str, players: list[Player], hands: int) -> None:
        seats = [SeatClient(self, p, table_id, hands) for p in players]
        self.active.update(seats)
        try:
            await asyncio.gather(*(s.play() for s in seats))
        finally:
            self.active.difference_update(seats)
        for s in seats:
            self.seen.extend(s.seen.values())

    async def wait_started(self, player: Player, table_id: str) -> dict[str, Any]:
        for _ in range(240):
            t: dict[str, Any] = (await player.call("GET", f"/api/tables/{table_id}")).json()
            # starting: the players are found and the deal waits for their clients to open it
            if t["status"] in ("starting", "started", "results", "closed"):
                return t
            await asyncio.sleep(0.5)
        raise AssertionError(f"table {table_id} did not start: {t}")

    async def create(self, player: Player, options: dict[str, Any]) -> tuple[str, str | None]:
        r = await player.call("POST", "/api/tables", {"options": options}, ok=(201, 409))
        if r.status_code == 201:
            return r.json()["table_id"], r.json().get("code")
        # An earlier try went through after all (its answer was lost): it is our table.
        table_id = (await player.me()).get("table_id")
        if not table_id:
            raise AssertionError(f"create refused: {r.text}")
        t = (await player.call("GET", f"/api/tables/{table_id}")).json()
        return table_id, t.get("code")

    async def rated_table(self) -> None:
        players = await self.players(4)
        try:
            options = {"rated": True, "clock": self.config.rated_clock, "public": False}
            table_id, code = await self.create(players[0], options)
            for p in players[1:]:
                r = await p.call("POST", f"/api/tables/{table_id}/join", {"code": code}, (200, 409))
                if r.status_code == 409 and (await p.me()).get("table_id") != table_id:
                    raise AssertionError(f"join {table_id} refused: {r.text}")
            await self.wait_started(players[0], table_id)
            self.tables["rated"] += 1
            await self.play_table(table_id, players, 1)  # every game is a single hand
        finally:
            for p in players:
                await p.close()

    async def quick_play_group(self) -> None:
        players = await self.players(4)
        try:
            self.quick_players += [p.id for p in players]
            for p in players:
                await p.call("POST", "/api/quickplay", {}, ok=(200, 409))
            seated: dict[str, list[Player]] = defaultdict(list)
            waiting = list(players)
            deadline = time.monotonic() + 180
            while waiting:
                if time.monotonic() > deadline:
                    raise AssertionError(f"Quick Play never seated {[p.id for p in waiting]}")
                await asyncio.sleep(1.0)
                for p in list(waiting):
                    me = await p.me()
                    if me.get("table_id"):
                        seated[me["table_id"]].append(p)
                        waiting.remove(p)
                    elif me.get("queue_since_ms") is None:  # the request was lost: again
                        await p.call("POST", "/api/quickplay", {}, ok=(200, 409))
            games = []
            for table_id, group in seated.items():
                await self.wait_started(group[0], table_id)
                self.tables["quick_play"] += 1
                games.append(self.play_table(table_id, group, 1))
            await asyncio.gather(*games)
        finally:
            for p in players:
                await p.close()

    async def computer_table(self) -> None:
        [player] = await self.players(1)
        try:
            options = {"computers": "normal", "pace": "fast", "clock": "bullet",
                       "public": False}  # fmt: skip
            table_id, _ = await self.create(player, options)
            await player.call("POST", f"/api/tables/{table_id}/fill", ok=(200, 409))
            await self.wait_started(player, table_id)
            self.tables["computers"] += 1
            await self.play_table(table_id, [player], 1)
        finally:
            await player.close()

    async def slot(self, make: Callable[[], Any], name: str) -> None:
        """Tables of one kind, one after another, until the traffic stops."""
        await asyncio.sleep(self.rng.uniform(0, 5))
        while not self.stop_traffic.is_set():
            try:
                await make()
            except Exception as exc:  # a client problem: logged, reported, play goes on
                self.client_errors.append(f"+{self.now()}s {name}: {type(exc).__name__}: {exc}")
                self.say(f"client error in {name}: {exc}")
                await asyncio.sleep(2.0)

    # --- waiting for quiet ---

    async def wait_all_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while True:
            running = all(p.poll() is None for p in self.cluster.procs.values())
            if running and all(self.cluster.ready(n) for n in self.cluster.names()):
                return
            if time.monotonic() > deadline:
                raise SoakError("services not all ready after the faults")
            await asyncio.sleep(1.0)

    async def wait_lag_zero(self, timeout: float = 240) -> dict[str, Any]:
        """Every consumer caught up, in two samples in a row (the gauge is sampled every 5 s).

        ``mahjong_consumer_lag`` is the log end offset minus the member's position, and on a
        topic written in transactions the end is one past the last commit marker, which no
        consumer position passes until the next record: an idle reader shows 1. So a
        non-zero gauge counts as caught up when the offsets it spans hold no record (a
        read-committed read from ``end - lag`` returns nothing)."""
        deadline = time.monotonic() + timeout
        zero_in_a_row = 0
        lags: dict[str, float] = {}
        markers: dict[str, int] = {}
        log = KafkaLog(self.kafka, client_id="soak-lag")
        await log.start()
        try:
            while time.monotonic() < deadline:
                lags, markers = {}, {}
                for name in LAG_SERVICES:
                    try:
                        text = await asyncio.to_thread(self.cluster.metrics, name)
                    except RuntimeError:
                        lags[name] = -1
                        continue
                    samples = [(lb, v) for s, lb, v in scrape(text) if s == "mahjong_consumer_lag"]
                    behind = 0.0
                    for labels, value in samples:
                        if not value:
                            continue
                        topic, partition = labels["topic"], int(labels["partition"])
                        end = await log.end_offset(topic, partition)
                        if not await log.read(topic, partition, max(0, end - int(value)), 10):
                            markers[name] = markers.get(name, 0) + int(value)
                            continue
                        behind += value
                    lags[name] = behind if samples else -1
                if any(lags.values()):
                    self.say(f"consumers behind: {lags}")
                zero_in_a_row = zero_in_a_row + 1 if all(v == 0 for v in lags.values()) else 0
                if zero_in_a_row >= 2:
                    break
                await asyncio.sleep(6.0)
        finally:
            await log.close()
        return {"lag": lags, "commit_markers_in_gauge": markers}

    # --- reading the log ---

    async def read_topic(self, topic: str) -> list[tuple[int, int, dict[str, Any]]]:
        log = KafkaLog(self.kafka, client_id="soak-verify")
        await log.start()
        out: list[tuple[int, int, dict[str, Any]]] = []
        try:
            for p in range(await log.partition_count(topic)):
                end = await log.end_offset(topic, p)
                position = 0
                while position < end:
                    records = await log.read(topic, p, position, 5000)
                    if not records:
                        break
                    out += [(p, r.offset, json.loads(r.value)) for r in records]
                    position = records[-1].offset + 1
        finally:
            await log.close()
        return out

    async def hands_in_log(self) -> dict[str, list[dict[str, Any]]]:
        hands: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for _, _, value in await self.read_topic(TABLE_EVENTS):
            hands[value["event"]["hand_id"]].append(value["event"])
        return hands

    async def wait_hands_ended(self, timeout: float = 600) -> list[str]:
        deadline = time.monotonic() + timeout
        while True:
            hands = await self.hands_in_log()
            open_ = [h for h, es in hands.items() if not any(e["type"] == "hand_ended" for e in es)]
            if not open_ or time.monotonic() > deadline:
                return open_
            self.say(f"waiting for {len(open_)} hands to end")
            await asyncio.sleep(10)

    # --- the run ---

    async def run(self) -> dict[str, Any]:
        c = self.config
        self.say(f"soak: {c.minutes} min, kill -9 every ~{c.kill_every_s:.0f} s, dir {c.workdir}")
        for var in ("KAFKA_BOOTSTRAP_SERVERS", "MAHJONG_POSTGRES_DSN", "MAHJONG_PG_DSN"):
            if os.environ.get(var):
                self.say(f"note: {var} is ignored; the soak runs and restarts its own servers")
        await asyncio.to_thread(self.servers.check_free)
        result: dict[str, Any] = {"config": {**asdict(c), "workdir": str(c.workdir)}}
        passed = False
        supervisor: asyncio.Task[None] | None = None
        try:
            embedded = await asyncio.to_thread(self.two_embedded_processes)
            self.kafka = await asyncio.to_thread(self.servers.kafka_up, True)
            self.dsn = await asyncio.to_thread(self.servers.pg_up, True)
            self.say(f"broker {self.kafka}, database {self.dsn}")
            mod = cluster_module()
            names = list(mod.SERVICES)
            shutil.rmtree(c.workdir / "cluster", ignore_errors=True)
            self.cluster = mod.Cluster(
                root=c.workdir / "cluster",
                kafka=self.kafka,
                postgres=self.dsn,
                ports=dict(zip(names, free_ports(len(names)), strict=True)),
                extra_args={"gateway": ["--trust-proxy", "127.0.0.1"]},
            )
            await asyncio.to_thread(self.cluster.create_topics)
            self.cluster.start_all()
            await asyncio.to_thread(self.cluster.wait_ready, None, 180.0)
            self.gateway_url = self.cluster.instance("gateway").base
            self.ws_url = self.gateway_url.replace("http://", "ws://") + "/ws"
            self.say(f"every service ready; gateway {self.gateway_url}; logs {self.cluster.logs}")
            supervisor = asyncio.create_task(self.supervise())

            self.t0 = time.monotonic()
            kinds = (
                [(self.rated_table, "rated")] * c.rated_tables
                + [(self.quick_play_group, "quick_play")] * c.quick_play_groups
                + [(self.computer_table, "computers")] * c.computer_tables
            )
            traffic = [asyncio.create_task(self.slot(f, n)) for f, n in kinds]
            reporter = asyncio.create_task(self.progress())
            zombie = asyncio.create_task(self.sigstopped_table_member(c.minutes * 60 * 0.5))
            poisoned = asyncio.create_task(self.after(c.minutes * 60 * 0.2, poison_each_input))
            await self.inject(c.minutes * 60)
            zombie_check = await zombie
            self.poisoned = await poisoned
            fault_window = self.now()
            self.stop_traffic.set()
            self.say(f"traffic stops; {len(traffic)} players' tables play to their end")
            _done, pending = await asyncio.wait(traffic, timeout=c.drain_timeout_s)
            for t in pending:
                t.cancel()
            if pending:
                self.client_errors.append(f"{len(pending)} tables still playing at the drain's end")
            reporter.cancel()
            self.say("every table played out; waiting for the services and the log")
            await self.wait_all_ready()
            open_hands = await self.wait_hands_ended()
            lags = await self.wait_lag_zero()
            self.say(f"drained after {self.now() - fault_window:.0f} s; lags {lags}")
            result |= {
                "fault_window_s": fault_window,
                "drain_s": round(self.now() - fault_window, 1),
            }
            result |= await self.verify(open_hands, lags)
            result["checks"]["two_embedded_processes"] = embedded
            result["checks"]["sigstopped_table_member"] = zombie_check
            passed = all(v["ok"] for v in result["checks"].values())
        finally:
            self.stop_traffic.set()
            self.supervising = False
            if supervisor is not None:
                await asyncio.gather(supervisor, return_exceptions=True)
            if self.cluster is not None:
                codes = await asyncio.to_thread(self.cluster.stop_all, 30.0)
                result["exit_codes_at_stop"] = codes
                result["errors_logged"] = self.errors_logged()
            await asyncio.to_thread(self.servers.stop, passed and not c.keep_data)
        result |= {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
            ).stdout.strip(),
            "passed": passed,
            "duration_s": self.now(),
            "faults": self.faults,
            "kills": Counter(f["target"] for f in self.faults if f["kind"] == "kill -9"),
            "restarts": dict(self.restarts),
            "unexpected_exits": self.unexpected_exits,
            "client": {
                "tables": dict(self.tables),
                "stats": dict(sorted(self.stats.items())),
                "stuck": self.stuck,
                "errors": self.client_errors[:50],
            },
            "logs": str(self.cluster.logs) if self.cluster is not None else None,
        }
        return result

    def errors_logged(self) -> dict[str, dict[str, int]]:
        """ERROR lines per service: the services' own (``mahjong.*``) and the libraries'."""
        out: dict[str, dict[str, int]] = {}
        for name in self.cluster.names():
            counts: Counter[str] = Counter()
            with contextlib.suppress(OSError):
                for line in self.cluster.log_file(name).read_text(errors="replace").splitlines():
                    if '"level": "ERROR"' in line or '"level": "CRITICAL"' in line:
                        own = '"logger": "mahjong.' in line
                        counts["own" if own else "libraries"] += 1
            out[name] = dict(counts)
        return out

    async def progress(self) -> None:
        while not self.stop_traffic.is_set() or self.active:
            await asyncio.sleep(60)
            playing = sorted(f"{c.table_id}:{len(c.ended)}/{c.hands}" for c in self.active)
            self.say(
                f"progress: tables {dict(self.tables)}, commands {self.stats['commands_sent']}, "
                f"sockets {self.stats['ws_sessions']}, client errors "
                f"{len(self.client_errors)}; playing {len(playing)}: {' '.join(playing)[:300]}"
            )

    # --- the checks ---

    async def after(self, seconds: float, step: Callable[[Soak], Any]) -> Any:
        """Run a fault step ``seconds`` into the fault window."""
        await asyncio.sleep(seconds)
        return await step(self)

    async def verify(self, open_hands: list[str], lags: dict[str, Any]) -> dict[str, Any]:
        checks: dict[str, dict[str, Any]] = {}
        checks["poison_set_aside"] = await check_poison_set_aside(self, self.poisoned)
        hands = await self.hands_in_log()
        ended = {h for h, es in hands.items() if any(e["type"] == "hand_ended" for e in es)}
        started = {h for h, es in hands.items() if es and es[0]["type"] == "hand_started"}
        rated = {h for h in ended if hands[h][0].get("rated")}
        timeouts = sum(1 for es in hands.values() for e in es if e.get("timeout") is True)

        # a. every hand finished (or resumed and then finished), none stuck
        spans = self.hands_across_faults()
        checks["hands_finished"] = {
            "ok": not open_hands and len(ended) == len(hands) > 0 and not self.stuck,
            "hands": len(hands),
            "started": len(started),
            "ended": len(ended),
            "not_ended": open_hands[:20],
            "clients_stuck": self.stuck[:20],
            "in_flight_at_a_fault_and_finished": spans,
        }

        # b. the audit
        audit = await asyncio.to_thread(
            self.cli, ["audit", "--kafka", self.kafka, "--show", "20"], 900
        )
        summary = audit.stdout.strip().splitlines()[-1] if audit.stdout.strip() else ""
        m = re.search(
            r"audited (\d+) hands.*?(\d+) passed, (\d+) failed, (\d+) unfinished", summary
        )
        figures = [int(x) for x in m.groups()] if m else [-1, -1, -1, -1]
        checks["audit"] = {
            "ok": audit.returncode == 0
            and figures[0] == figures[1] == len(hands)
            and figures[2] == 0,
            "exit": audit.returncode,
            "summary": summary,
            "mismatches": [x for x in audit.stdout.splitlines() if x.startswith("MISMATCH")][:20],
        }

        # c. no event lost or duplicated
        checks["events"] = self.check_events(hands)
        results = await self.read_topic(RATING_RESULTS)
        results = [r for r in results if not str(r[2].get("table_id")).startswith("soak-poison")]
        result_hands = Counter(v.get("hand_id") for _, _, v in results)
        checks["rating_results"] = {
            "ok": set(result_hands) == rated and all(n == 1 for n in result_hands.values()),
            "records": len(results),
            "rated_hands_ended": len(rated),
            "duplicates": [h for h, n in result_hands.items() if n > 1][:20],
            "missing": sorted(rated - set(result_hands))[:20],
            "unexpected": sorted(set(result_hands) - rated)[:20],
        }
        checks["client_views"] = self.check_client_views(hands)

        # d. rating recompute equals live
        recompute = await asyncio.to_thread(
            self.cli, ["ratings", "recompute", "--kafka", self.kafka, "--postgres", self.dsn], 600
        )
        applied = re.search(r"([\d,]+) applied", recompute.stdout)
        n_applied = int(applied.group(1).replace(",", "")) if applied else -1
        checks["recompute"] = {
            "ok": recompute.returncode == 0
            and "IDENTICAL" in recompute.stdout
            and n_applied == len(rated) > 0,
            "exit": recompute.returncode,
            "applied": n_applied,
            "rated_hands": len(rated),
            "report": recompute.stdout.strip().splitlines()[-12:]
            + recompute.stderr.splitlines()[-5:],
        }

        # e. Quick Play: every player seated exactly once
        checks["quick_play"] = await self.check_quick_play()
        # f. the hand history (through the PostgreSQL restart) compared with the log
        checks["history"] = await self.check_history(hands)
        checks["consumers_caught_up"] = {"ok": all(v == 0 for v in lags["lag"].values()), **lags}
        return {
            "hands": {
                "started": len(started),
                "finished": len(ended),
                "rated": len(rated),
                "in_flight_at_a_fault": len(self.resumed),
                "events": sum(len(es) for es in hands.values()),
                "timeouts": timeouts,
            },
            "checks": checks,
        }

    def cli(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP_SERVERS",)}
        return subprocess.run(
            [sys.executable, "-m", "services.cli", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def check_events(self, hands: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """Per hand, seqs 1..n in log order; each command's events one unbroken run."""
        gaps, repeats, disorder, split_commands = [], [], [], []
        applied: Counter[str] = Counter()
        for hand_id, events in hands.items():
            seqs = [e["seq"] for e in events]
            if seqs != list(range(1, len(seqs) + 1)):
                counts = Counter(seqs)
                dup = sorted(s for s, n in counts.items() if n > 1)
                missing = sorted(set(range(1, max(seqs) + 1)) - set(seqs))
                if dup:
                    repeats.append({"hand": hand_id, "seqs": dup[:10]})
                if missing:
                    gaps.append({"hand": hand_id, "seqs": missing[:10]})
                if not dup and not missing:
                    disorder.append(hand_id)
            runs: dict[str, list[int]] = defaultdict(list)
            for i, e in enumerate(events):
                if e.get("command_id"):
                    runs[e["command_id"]].append(i)
            for command_id, at in runs.items():
                applied[command_id] += 1
                if at != list(range(at[0], at[0] + len(at))):
                    split_commands.append({"hand": hand_id, "command_id": command_id})
        ours = self.sent_commands
        return {
            "ok": not (gaps or repeats or disorder or split_commands),
            "hands": len(hands),
            "gaps": gaps[:20],
            "repeats": repeats[:20],
            "out_of_order": disorder[:20],
            "commands_applied_twice": split_commands[:20],
            "client_commands_sent": len(ours),
            "client_commands_applied": len(ours & set(applied)),
            "client_commands_not_applied": len(ours - set(applied)),
            "client_rejections": sum(n for k, n in self.stats.items() if k.startswith("rejected ")),
        }

    def check_client_views(self, hands: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """What each socket received of a hand it saw end: every seq of the log, same types."""
        compared, differ = 0, []
        for seen in self.seen:
            if seen.ended_at is None or seen.hand_id not in hands:
                continue
            compared += 1
            log = {e["seq"]: e["type"] for e in hands[seen.hand_id]}
            if seen.events != log:
                missing = sorted(set(log) - set(seen.events))[:10]
                wrong = sorted(s for s in set(log) & set(seen.events) if log[s] != seen.events[s])
                extra = sorted(set(seen.events) - set(log))[:10]
                differ.append({"hand": seen.hand_id, "player": seen.player, "missing": missing,
                               "wrong_type": wrong[:10], "extra": extra})  # fmt: skip
        return {
            "ok": not differ and compared > 0,
            "hands_compared": compared,
            "differ": differ[:20],
        }

    def hands_across_faults(self) -> dict[str, int]:
        """Hands that were being played when a fault happened (and then finished), by fault."""
        spans: Counter[str] = Counter()
        first: dict[str, float] = {}
        last: dict[str, float] = {}
        for s in self.seen:
            if s.ended_at is None:
                continue
            first[s.hand_id] = min(first.get(s.hand_id, s.first_seen), s.first_seen)
            last[s.hand_id] = max(last.get(s.hand_id, s.ended_at), s.ended_at)
        wall0 = time.time() - (time.monotonic() - self.t0)
        for f in self.faults:
            at = wall0 + f["t"]
            kind = f"{f['kind']} {f['target']}" if f["kind"] == "kill -9" else f["kind"]
            if f.get("phase") == "up":
                continue
            during = {h for h in first if first[h] < at < last[h]}
            spans[kind] += len(during)
            self.resumed |= during
        return dict(spans)

    async def check_quick_play(self) -> dict[str, Any]:
        seated: Counter[str] = Counter()
        matched: Counter[str] = Counter()
        for _, _, value in await self.read_topic(LOBBY_EVENTS):
            e = value["event"]
            if e["type"] == "table_started":
                seated.update(e["players"])
            elif e["type"] == "queue_left" and e.get("matched_table"):
                matched[e["player"]] += 1
        wrong = [p for p in self.quick_players if seated[p] != 1 or matched[p] != 1]
        return {
            "ok": not wrong,
            "players": len(self.quick_players),
            "not_seated_exactly_once": [
                {"player": p, "tables_started": seated[p], "matched": matched[p]} for p in wrong
            ][:20],
        }

    async def check_history(self, hands: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """History compared with the log: every ended hand has exactly its four rows, with
        the log's scores and placements, nothing else; ``history rebuild`` is identical."""
        import asyncpg

        conn = await asyncpg.connect(self.dsn)
        try:
            rows = await conn.fetch("SELECT hand_id, seat, score, placement FROM history.hands")
        finally:
            await conn.close()
        stored: dict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
        doubled = 0
        for r in rows:
            doubled += r["seat"] in stored[r["hand_id"]]
            stored[r["hand_id"]][r["seat"]] = (r["score"], r["placement"])
        expected = {
            h: {s: (end["scores"][s], end["placements"][s]) for s in range(4)}
            for h, es in hands.items()
            for end in es[-1:]
            if end["type"] == "hand_ended"
        }
        missing = sorted(set(expected) - set(stored))
        unexpected = sorted(set(stored) - set(expected))
        wrong = sorted(h for h in set(expected) & set(stored) if stored[h] != expected[h])
        rebuilt = await asyncio.to_thread(
            self.cli, ["history", "rebuild", "--kafka", self.kafka, "--postgres", self.dsn], 600
        )
        return {
            "ok": not (missing or unexpected or wrong or doubled)
            and len(expected) > 0
            and rebuilt.returncode == 0
            and "IDENTICAL" in rebuilt.stdout,
            "hands_ended": len(expected),
            "hands_in_history": len(stored),
            "rows": len(rows),
            "missing": missing[:20],
            "unexpected": unexpected[:20],
            "differing": wrong[:20],
            "rows_doubled": doubled,
            "rebuild": rebuilt.stdout.strip().splitlines()[-6:] + rebuilt.stderr.splitlines()[-5:],
        }


# --- fault: a poison record on each input topic (issue 17) ---------------------------------

POISON_RECORDS: dict[str, bytes] = {
    "table.commands": b'{"command": {"type": "discard", "seat": 0, "table_id": "soak-poison", '
    b'"tile": "1m", "command_id": "soak-poison\\u0000"}}',
    "match.requests": b'{"request": {"type": "join_queue", "player": "soak-poison", '
    b'"request_id": "soak-poison", "computers_after_s": 1000000000000000000000000000000}}',
    RATING_RESULTS: b'{"type": "rated_hand_result", "table_id": "soak-poison", "hand_id": '
    b'"soak-poison#1", "players": ["a\\u0000", "b", "c", "d"], "points": [2147483648, 0, 0, '
    b'-2147483648], "rated": true, "clock": "standard"}',
    LOBBY_EVENTS: b'{"event": {"type": "seat_taken", "table_id": "soak-poison"}, "v": 1}',
}
"""Well-formed records that no service can apply: a NUL in an id, a number beyond int32,
a wait of 10^30 s, a lobby event without its player."""


async def poison_each_input(soak: Soak) -> dict[str, int]:
    """Fault: append one poison record to every input topic a service stores a position in
    or commits a group offset for; returns where each went (topic -> offset)."""
    log = KafkaLog(soak.kafka, client_id="soak-poison")
    await log.start()
    where: dict[str, int] = {}
    try:
        for topic, raw in POISON_RECORDS.items():
            partition = 0 if topic != "table.commands" else None
            await log.produce([Outgoing(topic, "soak-poison", raw, partition)])
            p = partition_for("soak-poison", await log.partition_count(topic))
            where[topic] = await log.end_offset(topic, p if partition is None else 0) - 1
    finally:
        await log.close()
    soak.fault("poison record", "every input topic", topics=sorted(where))
    return where


async def check_poison_set_aside(soak: Soak, injected: dict[str, int]) -> dict[str, Any]:
    """After the drain: each poison record was set aside with a reason (a dead letter, or
    matchmaking's ``malformed`` answer) and the services went on (their lag is checked
    elsewhere; recompute equals live with the poison result in the log)."""
    if not injected:
        return {"ok": False, "reason": "no poison was injected"}
    found: dict[str, str] = {}
    for topic in ("table.commands", RATING_RESULTS, LOBBY_EVENTS):
        letters = [v for _, _, v in await soak.read_topic(f"{topic}.dlq")]
        hit = [x for x in letters if x.get("source_topic") == topic and "soak-poison" in x["raw"]]
        if hit:
            found[topic] = hit[0]["reason"][:120]
    replies = [v for _, _, v in await soak.read_topic("match.replies")]
    refused = [r for r in replies if r.get("code") == "malformed" and "computers_after_s" in
               r.get("reason", "")]  # fmt: skip
    if refused:
        found["match.requests"] = refused[0]["reason"][:120]
    return {"ok": set(found) == set(POISON_RECORDS), "injected": injected, "set_aside": found}


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def run_soak(config: SoakConfig) -> dict[str, Any]:
    """One soak; the results (``passed`` says whether every check held)."""
    return asyncio.run(Soak(config).run())


def summary(result: dict[str, Any]) -> str:
    lines = [
        f"soak: {'PASSED' if result.get('passed') else 'FAILED'} "
        f"after {result.get('duration_s')} s "
        f"(faults for {result.get('fault_window_s')} s, drain {result.get('drain_s')} s)",
        f"faults: {len(result.get('faults', []))} "
        f"(kills {dict(result.get('kills', {}))}); restarts {result.get('restarts')}; "
        f"unexpected exits {len(result.get('unexpected_exits', []))}",
        f"hands: {result.get('hands')}",
        f"tables: {result.get('client', {}).get('tables')}",
    ]
    for name, check in result.get("checks", {}).items():
        detail = {k: v for k, v in check.items() if k != "ok" and v not in ([], {}, None)}
        lines.append(f"  {'ok  ' if check['ok'] else 'FAIL'} {name}: {json.dumps(detail)[:400]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tests.soak.soak", description=__doc__.split("\n")[0]
    )
    p.add_argument("--minutes", type=float, default=30.0, help="traffic and faults (default 30)")
    p.add_argument("--kill-every", type=float, default=60.0, help="seconds between kills (60)")
    p.add_argument("--json", default="soak-results.json", help="results file")
    p.add_argument("--kafka-port", type=int, default=29092)
    p.add_argument("--pg-port", type=int, default=25432)
    p.add_argument("--dir", default="/tmp/mahjong-planet-soak", help="service logs go here")
    p.add_argument("--rated-tables", type=int, default=2)
    p.add_argument("--quick-play", type=int, default=1, help="concurrent Quick Play groups")
    p.add_argument("--computer-tables", type=int, default=2)
    p.add_argument("--think", default="0.3,1.5", help="a player's decision time, min,max s")
    p.add_argument("--seed", type=int)
    p.add_argument("--keep-data", action="store_true", help="keep broker/database data")
    a = p.parse_args(argv)
    lo, hi = (float(x) for x in a.think.split(","))
    config = SoakConfig(
        minutes=a.minutes,
        kill_every_s=a.kill_every,
        kafka_port=a.kafka_port,
        pg_port=a.pg_port,
        workdir=Path(a.dir),
        rated_tables=a.rated_tables,
        quick_play_groups=a.quick_play,
        computer_tables=a.computer_tables,
        think_s=(lo, hi),
        seed=a.seed,
        keep_data=a.keep_data,
    )
    try:
        result = run_soak(config)
    except SoakError as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 2
    Path(a.json).write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(summary(result))
    print(f"results: {a.json}")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
