"""Load test (issue 10): concurrent tables played through the gateway, every service its own
process on a real Kafka broker and PostgreSQL.

    python -m tests.bench.load          (``make load``) prints a table, writes load-results.json

**What runs.** ``deploy/cluster.py``'s ``Cluster`` starts table, clock, bots, matchmaking,
lobby-projector, rating and the gateway as separate processes (the gateway with
``--trust-proxy 127.0.0.1``: each simulated player is its own client address in
``X-Forwarded-For``, as behind a load balancer, so the per-address limits stay as shipped).

**Who plays.** Load-client processes (``MAHJONG_LOAD_WORKERS``, default 2) play each table's
seats as real clients do: a guest account per seat (``POST /api/auth/guest``), a private
table created by one guest (``POST /api/tables``, clock ``standard``, casual) and joined by
the other three with its code, then one WebSocket per seat (``hello``, then ``view`` /
``events`` frames). Each decision offered in a ``view`` is answered 0.5–1.5 s later (uniform,
a human pace) with the ``easy`` bot's choice from that ``SeatView``, echoing its
``decision_seq``. Like the web client, each socket says ``compact`` in its hello and rebuilds
its view from ``change`` frames (``MAHJONG_LOAD_COMPACT=0``: the classic ``events`` + whole
``view`` frames, for comparison). ``MAHJONG_LOAD_SEATS=1`` plays one seat per table over the
gateway and fills the other three with the bots service's computers (``easy``, pace
``normal``).
A table plays ``MAHJONG_LOAD_HANDS`` hands (default 4, the lobby's default); when it closes,
the same guests open the next table.

**Levels.** For each level (``MAHJONG_LOAD_LEVELS``, default 100,500,1000 tables) the slots
start spread over a ramp (``MAHJONG_LOAD_RAMP_SECONDS``, default ``max(20, tables/5)`` s; the
gateway opens only a few tables a second). The steady window (``MAHJONG_LOAD_SECONDS``,
default 60 s) opens once every table plays (the load clients say READY; the coordinator
answers with the window), so the ramp is never measured. Every level runs on a cluster of
its own; on the bench's own broker, a broker from empty (``KAFKA_FRESH=1``): the tables of
the level before are simply left, and no clock of theirs can time them out into the next
level. On a broker given by the environment the open tables are played to their end after
the window instead (a drain, not measured).

**Figures**, per level, over the steady window:

- action→broadcast latency, p50/p90/p99/max: from sending a ``command`` frame to receiving
  the first ``view`` frame that shows it applied (the hand or ``decision_seq`` moved on, or
  the seat is no longer pending), actions sent in the window only;
- actions/s, frames/s received, hands and tables finished; rejections, error frames,
  clock timeouts of load-client seats, HTTP and connect failures, actions never answered;
- CPU % (of one core) and RSS of every service process, of the broker's JVM and of
  PostgreSQL (postmaster and its backends), from ``/proc``; and of the load clients
  themselves, so a saturated load generator is seen;
- consumer lag: every service's ``mahjong_consumer_lag`` gauge (``/metrics``) summed per
  service, sampled every ``MAHJONG_LOAD_SAMPLE_SECONDS`` (3 s; the services refresh it every
  5 s), mean and max over the window.

Then ``load_limit_tables``: the largest number of tables whose p99 stays under 100 ms, by
bisection between the largest level that held and the smallest that did not
(``MAHJONG_LOAD_SEARCH_STEPS``, default 3, each ``MAHJONG_LOAD_SEARCH_SECONDS``, default 30 s).

**Broker and database.** ``KAFKA_BOOTSTRAP_SERVERS`` / ``MAHJONG_POSTGRES_DSN`` when set (used
as they are: the broker must not have another deployment's services running on it, since
the cluster's services join the standard consumer groups). Otherwise the bench starts its
own with ``deploy/kafka/kafka.sh`` and ``deploy/postgres/postgres.sh`` on ports of its own
(``MAHJONG_LOAD_KAFKA_PORT``, default 49092; ``MAHJONG_LOAD_PG_PORT``, default 45432), both
from empty data (``KAFKA_FRESH=1``; the database directory removed first), and stops and
removes them at the end. A broker already running on that port is refused rather than
reused: its history may hold another run's consumer groups and open hands.

``tests/integration/test_load.py`` runs a small level (a dozen tables, half a minute) with
these functions on the integration fixtures' broker and database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from schemas.views import SeatView
from services.gateway.protocol import changed_view
from tests.cluster_support import cluster_module, free_ports

ROOT = Path(__file__).resolve().parents[2]
KAFKA_SH = ROOT / "deploy" / "kafka" / "kafka.sh"
POSTGRES_SH = ROOT / "deploy" / "postgres" / "postgres.sh"

LEVELS = (100, 500, 1000)
WINDOW_S = 60.0
LIMIT_P99_MS = 100.0
THINK_S = (0.5, 1.5)
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


@dataclass(frozen=True)
class LevelConfig:
    """One level: how many tables, for how long, played how."""

    tables: int
    seconds: float = WINDOW_S  # the steady window measured
    ramp_s: float | None = None  # None: max(20, tables / 5) (the gateway opens few tables/s)
    settle_s: float = 5.0  # after the ramp, before the window
    drain_s: float = 0.0  # after the window: tables played on (to their end) at most this
    seats: int = 4  # seats per table played over the gateway; the rest are computers
    hands: int = 4  # hands per table (the lobby's default)
    clock: str | None = "standard"
    think_s: tuple[float, float] = THINK_S
    workers: int = 1  # load-client processes (the bench: 2, MAHJONG_LOAD_WORKERS)
    sample_s: float = 3.0  # lag samples
    ramp_timeout_s: float = 300.0  # past the ramp: the window opens even if not all play
    compact: bool = True  # the hello's compact, as the web client sends it (change frames)

    @property
    def ramp(self) -> float:
        return self.ramp_s if self.ramp_s is not None else max(20.0, self.tables / 5)

    @classmethod
    def from_env(cls, tables: int, **overrides: Any) -> LevelConfig:
        ramp = os.environ.get("MAHJONG_LOAD_RAMP_SECONDS")
        values: dict[str, Any] = {
            "tables": tables,
            "seconds": _env_float("MAHJONG_LOAD_SECONDS", WINDOW_S),
            "ramp_s": float(ramp) if ramp else None,
            "seats": _env_int("MAHJONG_LOAD_SEATS", 4),
            "hands": _env_int("MAHJONG_LOAD_HANDS", 4),
            "clock": os.environ.get("MAHJONG_LOAD_CLOCK", "standard") or None,
            "workers": _env_int("MAHJONG_LOAD_WORKERS", 2),
            "compact": _env_int("MAHJONG_LOAD_COMPACT", 1) == 1,
            "sample_s": _env_float("MAHJONG_LOAD_SAMPLE_SECONDS", 3.0),
        }
        values.update(overrides)
        return cls(**values)


# --- the load clients ---------------------------------------------------------------------------


class _Welcome(msgspec.Struct, tag_field="type", tag="welcome"):
    role: str = ""


class _Table(msgspec.Struct, tag_field="type", tag="table"):
    status: str = ""


class _View(msgspec.Struct, tag_field="type", tag="view"):
    seq: int
    hand_id: str
    decision_seq: int
    view: SeatView


class _Event(msgspec.Struct):
    type: str
    seq: int = 0
    seat: Any = None
    at_ms: int = 0
    timeout: Any = False


class _Events(msgspec.Struct, tag_field="type", tag="events"):
    hand_id: str
    events: list[_Event]


class _Change(msgspec.Struct, tag_field="type", tag="change"):
    seq: int
    hand_id: str
    decision_seq: int
    events: list[_Event] = []
    view: dict[str, Any] = {}
    players: dict[str, dict[str, Any]] = {}
    full: bool = False


class _Rejected(msgspec.Struct, tag_field="type", tag="rejected"):
    command_id: str
    code: str


class _Error(msgspec.Struct, tag_field="type", tag="error"):
    code: str
    command_id: str | None = None


class _Pong(msgspec.Struct, tag_field="type", tag="pong"):
    t: Any = None


_Frame = _Welcome | _Table | _View | _Events | _Change | _Rejected | _Error | _Pong
_decode = msgspec.json.Decoder(_Frame).decode
_FILLED_BY_GATEWAY = ("seat", "table_id", "command_id", "hand_id", "decision_seq")


@dataclass
class Stats:
    """What one load-client process saw. Counts are for the steady window unless named
    ``total_``; ``latencies_ms`` are those of actions sent in the window."""

    latencies_ms: list[float] = field(default_factory=list)
    total_latencies: int = 0
    actions: int = 0
    total_actions: int = 0
    frames: int = 0
    bytes_in: int = 0
    hands: int = 0
    total_hands: int = 0
    total_tables: int = 0
    total_tables_opened: int = 0
    unanswered: int = 0  # actions whose broadcast never came
    in_flight_at_stop: int = 0  # sent in the last seconds before the level stopped
    playing_at_window: int = 0  # tables whose players all had their first view
    tables: int = 0
    timeouts: int = 0  # load-client seats timed out by the clock
    rejected: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    http_failures: Counter[str] = field(default_factory=Counter)
    connect_failures: int = 0
    closed_early: int = 0  # sockets that closed before their table's hands were done
    unfinished_tables: int = 0  # still playing when the drain ran out
    cpu_s: float = 0.0  # this process, over the window
    window_s: float = 0.0
    max_rss_kb: int = 0
    setup_s: list[float] = field(default_factory=list)  # guest..first view, per table


class Clock:
    """The window, in wall-clock seconds (shared between processes)."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def inside(self, t: float | None = None) -> bool:
        t = time.time() if t is None else t
        return self.start <= t < self.end


class Seat:
    """One WebSocket player: answers its decisions with the easy bot after a human pause and
    times every action until the broadcast that shows it applied."""

    def __init__(
        self, ws: Any, stats: Stats, clock: Clock, hands: int, rng: random.Random, cfg: LevelConfig
    ) -> None:
        from services.bots import make_bot

        self.ws, self.stats, self.clock, self.hands, self.rng, self.cfg = (
            ws,
            stats,
            clock,
            hands,
            rng,
            cfg,
        )
        self.bot = make_bot("easy")
        self.view: _View | None = None
        self.data: dict[str, Any] | None = None  # the view as JSON data (compact frames)
        self.answered: set[tuple[str, int]] = set()
        self.ended: set[str] = set()
        self.waiting: tuple[str, int, float, bool, str] | None = None  # hand, dseq, t, in window
        self.clock_at_ms = 0  # when the current hand's clocks start (a pause before a hand)
        self.n = 0
        self.handle: asyncio.TimerHandle | None = None
        self.done = asyncio.Event()
        self.first_view = asyncio.Event()
        self.over = False  # the last hand's final view arrived
        self.counts = False

    def stopped(self) -> None:
        """The level is over before this seat's hands: an action sent in the last seconds is
        in flight, not unanswered."""
        w = self.waiting
        if w is not None and time.perf_counter() - w[2] < 5.0:
            self.stats.in_flight_at_stop += 1
            self.waiting = None
        if self.handle is not None:
            self.handle.cancel()
        self.hands = 0  # not counted as closed early

    @property
    def finished(self) -> bool:
        return len(self.ended) >= self.hands

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                self._frame(raw)
                if self.over:
                    break
        except Exception:
            pass
        finally:
            if self.handle is not None:
                self.handle.cancel()
            if self.waiting is not None:
                self.stats.unanswered += self.waiting[3]
                self.waiting = None
            if not self.finished:
                self.stats.closed_early += 1
            self.done.set()

    def _frame(self, raw: str | bytes) -> None:
        stats = self.stats
        inside = self.clock.inside()
        if inside:
            stats.frames += 1
            stats.bytes_in += len(raw)
        try:
            frame = _decode(raw)
        except msgspec.DecodeError:
            stats.errors["undecodable_frame"] += 1
            return
        if isinstance(frame, _View):
            self._on_view(frame)
        elif isinstance(frame, _Events):
            self._on_events(frame.hand_id, frame.events, inside)
        elif isinstance(frame, _Change):
            # As the web client does: the events, then the view with the changes applied.
            self._on_events(frame.hand_id, frame.events, inside)
            change = {"view": frame.view, "players": frame.players, "full": frame.full}
            self.data = changed_view(self.data, change)
            view = msgspec.convert(self.data, SeatView)
            self._on_view(_View(frame.seq, frame.hand_id, frame.decision_seq, view))
        elif isinstance(frame, _Rejected):
            stats.rejected[frame.code] += 1
            if self.waiting is not None and frame.command_id == self.waiting[4]:
                self.waiting = None
        elif isinstance(frame, _Error):
            stats.errors[frame.code] += 1

    def _on_events(self, hand_id: str, events: list[_Event], inside: bool) -> None:
        stats = self.stats
        for e in events:
            if e.type == "hand_ended":
                if hand_id not in self.ended:
                    self.ended.add(hand_id)
                    if self.counts:  # one seat of the table counts its hands
                        stats.total_hands += 1
                        stats.hands += inside
            elif e.type == "clock_started":
                self.clock_at_ms = max(self.clock_at_ms, e.at_ms)
            elif e.type == "clock_stopped" and e.timeout is True and self._mine(e.seat):
                stats.timeouts += inside

    def _mine(self, seat: Any) -> bool:
        return self.view is not None and seat == self.view.view.seat

    def _on_view(self, frame: _View) -> None:
        now = time.perf_counter()
        self.view = frame
        self.first_view.set()
        view = frame.view
        w = self.waiting
        if w is not None and (
            frame.hand_id != w[0] or frame.decision_seq != w[1] or view.seat not in view.pending
        ):
            self.waiting = None
            self.stats.total_latencies += 1
            if w[3]:
                self.stats.latencies_ms.append((now - w[2]) * 1000)
        if self.finished:
            self.over = True
            return
        key = (frame.hand_id, frame.decision_seq)
        if view.legal_actions and key not in self.answered and self.waiting is None:
            self.answered.add(key)
            delay = self.rng.uniform(*self.cfg.think_s)
            # A hand dealt right after another starts its clocks after a pause: people do
            # not answer before the clock runs (see test_cluster.play_timed_hands).
            early = (self.clock_at_ms - time.time() * 1000) / 1000 + 0.05
            loop = asyncio.get_running_loop()
            self.handle = loop.call_later(max(delay, early), self._act, key)

    def _act(self, key: tuple[str, int]) -> None:
        self.handle = None
        frame = self.view
        if frame is None or (frame.hand_id, frame.decision_seq) != key or self.finished:
            return  # the decision passed (someone else's claim closed the window)
        if not frame.view.legal_actions or frame.view.seat not in frame.view.pending:
            return
        body = msgspec.to_builtins(self.bot.act(frame.view))
        for k in _FILLED_BY_GATEWAY:
            body.pop(k, None)
        self.n += 1
        cid = f"c{self.n}-{frame.decision_seq}"
        message = msgspec.json.encode(
            {
                "type": "command",
                "command_id": cid,
                "decision_seq": frame.decision_seq,
                "hand_id": frame.hand_id,
                "body": body,
            }
        ).decode()
        inside = self.clock.inside()
        self.stats.total_actions += 1
        self.stats.actions += inside
        self.waiting = (frame.hand_id, frame.decision_seq, time.perf_counter(), inside, cid)
        asyncio.get_running_loop().create_task(self._send(message))

    async def _send(self, message: str) -> None:
        with contextlib.suppress(Exception):
            await self.ws.send(message)


class Slot:
    """One table's players: they open a table, play its hands, and open the next one until
    the window is over."""

    def __init__(self, driver: Driver, index: int) -> None:
        self.d, self.index = driver, index
        self.rng = random.Random(index * 7919 + 1)
        worker = driver.worker
        base = (driver.level_tag * 64 + worker) % 250
        self.addresses = [
            f"10.{base}.{(index * 4 + s) // 250 % 250}.{(index * 4 + s) % 250 + 1}"
            for s in range(4)
        ]
        self.tokens: list[str] = []

    async def http(
        self, method: str, path: str, seat: int, body: Any = None, token: str | None = None
    ) -> dict[str, Any]:
        headers = {"x-forwarded-for": self.addresses[seat]}
        if token:
            headers["authorization"] = f"Bearer {token}"
        for attempt in range(8):
            try:
                r = await self.d.client.request(method, path, json=body, headers=headers)
            except Exception as exc:
                self.d.stats.http_failures[type(exc).__name__] += 1
                await asyncio.sleep(0.5 * (attempt + 1))
                continue
            if r.status_code < 300:
                result: dict[str, Any] = r.json()
                return result
            code = ""
            with contextlib.suppress(Exception):
                code = r.json().get("code", "")
            if code == "already_seated":  # the last table is closing: not a failure
                await asyncio.sleep(0.3)
                continue
            self.d.stats.http_failures[f"{r.status_code} {code}".strip()] += 1
            if r.status_code in (429, 503) or r.status_code >= 500:
                retry = float(r.headers.get("retry-after") or 0.5 * (attempt + 1))
                await asyncio.sleep(min(retry, 5.0))
                continue
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:200]}")
        raise RuntimeError(f"{method} {path}: gave up")

    async def run(self) -> None:
        d = self.d
        cfg = d.cfg
        await asyncio.sleep(max(0.0, d.start_at(self.index) - time.time()))
        began = time.monotonic()
        for s in range(cfg.seats):
            out = await self.http("POST", "/api/auth/guest", s)
            self.tokens.append(out["token"])
        first = True
        while time.time() < d.clock.end and not d.stop.is_set():
            await self.table(began, first)
            began, first = time.monotonic(), False

    async def table(self, began: float, first: bool) -> None:
        d, cfg = self.d, self.d.cfg
        options: dict[str, Any] = {
            "public": False,
            "rated": False,
            "clock": cfg.clock,
            "hands": cfg.hands,
            "computers": "easy" if cfg.seats < 4 else None,
            "pace": "normal",
        }
        created = await self.http("POST", "/api/tables", 0, {"options": options}, self.tokens[0])
        table_id, code = created["table_id"], created.get("code")
        d.stats.total_tables_opened += 1
        for s in range(1, cfg.seats):
            await self.http(
                "POST", f"/api/tables/{table_id}/join", s, {"code": code}, self.tokens[s]
            )
        if cfg.seats < 4:
            await self.http("POST", f"/api/tables/{table_id}/fill", 0, {}, self.tokens[0])
        seats = [await self.connect(s, table_id) for s in range(cfg.seats)]
        live = [s for s in seats if s is not None]
        if live:
            live[0].counts = True
        readers = [asyncio.create_task(s.read()) for s in live]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(s.first_view.wait() for s in live)), 120)
        d.stats.setup_s.append(time.monotonic() - began)
        if first:
            d.playing(all(s.first_view.is_set() for s in live) and len(live) == cfg.seats)
        done = asyncio.ensure_future(asyncio.gather(*(s.done.wait() for s in live)))
        stop = asyncio.ensure_future(d.stop.wait())
        await asyncio.wait({done, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not done.done():
            done.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await done
            d.stats.unfinished_tables += 1
            for s in live:
                s.stopped()
        for s in live:
            with contextlib.suppress(Exception):
                await s.ws.close()
        await asyncio.gather(*readers, return_exceptions=True)
        if live and all(s.finished for s in live):
            d.stats.total_tables += 1

    async def connect(self, seat: int, table_id: str) -> Seat | None:
        import websockets

        for attempt in range(5):
            try:
                ws = await websockets.connect(
                    self.d.ws_url,
                    additional_headers={"x-forwarded-for": self.addresses[seat]},
                    max_size=2**22,
                    open_timeout=30,
                    ping_interval=None,  # the server's keep-alive pings do the job
                )
            except Exception:
                self.d.stats.connect_failures += 1
                await asyncio.sleep(0.5 * (attempt + 1))
                continue
            s = Seat(ws, self.d.stats, self.d.clock, self.d.cfg.hands, self.rng, self.d.cfg)
            hello = {
                "type": "hello",
                "v": 1,
                "token": self.tokens[seat],
                "table_id": table_id,
                "compact": self.d.cfg.compact,
            }
            await ws.send(json.dumps(hello))
            return s
        return None


class Driver:
    """The slots of one load-client process."""

    def __init__(
        self,
        url: str,
        cfg: LevelConfig,
        slots: Sequence[int],
        t0: float,
        worker: int,
        level_tag: int,
        window: tuple[float, float] | None = None,
    ) -> None:
        self.url, self.cfg, self.slots, self.t0 = url, cfg, slots, t0
        self.ws_url = url.replace("http://", "ws://") + "/ws"
        self.clock = Clock(*(window or (math.inf, math.inf)))
        self.worker, self.level_tag = worker, level_tag
        self.stats = Stats(tables=len(slots))
        self.stop = asyncio.Event()
        self.ready = asyncio.Event()
        self.started = 0
        self.client: Any = None

    def playing(self, ok: bool) -> None:
        """A slot's first table is being played (or failed to start)."""
        self.started += 1
        self.stats.playing_at_window += ok
        if self.started >= len(self.slots):
            self.ready.set()

    async def window(self, lines: Any) -> None:
        """Print READY when every slot plays, then take the window (``WINDOW start end``)
        from ``lines`` (stdin), and stop the level at its end (or after the drain)."""
        await self.ready.wait()
        print("READY", flush=True)
        line = await lines()
        _, start, end = line.split()
        self.clock.start, self.clock.end = float(start), float(end)
        await asyncio.sleep(max(0.0, self.clock.end - time.time()) + self.cfg.drain_s)
        self.stop.set()

    async def _slot(self, index: int) -> None:
        slot = Slot(self, index)
        try:
            await slot.run()
        except Exception as exc:
            self.stats.http_failures[f"slot failed: {str(exc)[:120]}"] += 1
            if not self.ready.is_set() and self.started < len(self.slots):
                self.playing(False)

    def start_at(self, index: int) -> float:
        return self.t0 + self.cfg.ramp * index / max(1, self.cfg.tables)

    async def measure_self(self) -> None:
        while self.clock.start == math.inf:
            await asyncio.sleep(0.2)
        await asyncio.sleep(max(0.0, self.clock.start - time.time()))
        cpu0, t0 = time.process_time(), time.time()
        await asyncio.sleep(max(0.0, self.clock.end - time.time()))
        self.stats.cpu_s = time.process_time() - cpu0
        self.stats.window_s = time.time() - t0

    async def run(self, lines: Any) -> Stats:
        import resource

        import httpx

        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(base_url=self.url, timeout=60, limits=limits) as client:
            self.client = client
            meter = asyncio.create_task(self.measure_self())
            window = asyncio.create_task(self.window(lines))
            tasks = [asyncio.create_task(self._slot(i)) for i in self.slots]
            await asyncio.gather(*tasks)
            meter.cancel()
            window.cancel()
        self.stats.max_rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return self.stats


def _spawn_worker(
    url: str,
    cfg: LevelConfig,
    slots: list[int],
    t0: float,
    worker: int,
    level_tag: int,
) -> subprocess.Popen[str]:
    """A load-client process (``python -m tests.bench.load worker ARGS``) playing ``slots``."""
    args = {
        "url": url,
        "cfg": asdict(cfg),
        "slots": slots,
        "t0": t0,
        "worker": worker,
        "level_tag": level_tag,
    }
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.bench.load", "worker", json.dumps(args)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )


class Worker:
    """A load-client process seen from the coordinator: its stdout lines in a queue."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def wait_ready(self, deadline: float) -> bool:
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                return False
            if line is None:
                raise RuntimeError(f"a load-client process exited ({self.proc.wait()})")
            if line == "READY":
                return True

    def window(self, start: float, end: float) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(f"WINDOW {start} {end}\n")
            self.proc.stdin.flush()

    def result(self, timeout: float) -> dict[str, Any]:
        self.thread.join(timeout)
        code = self.proc.wait(timeout=10)
        last: str | None = None
        while not self.lines.empty():
            line = self.lines.get()
            if line:
                last = line
        if code != 0 or not last or not last.startswith("{"):
            raise RuntimeError(f"a load-client process failed (exit {code})")
        result: dict[str, Any] = json.loads(last)
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def worker_main(raw: str) -> int:
    """The load-client process: play its slots, print its ``Stats`` as one JSON line."""
    a = json.loads(raw)
    c = a["cfg"]
    cfg = LevelConfig(**{**c, "think_s": tuple(c["think_s"])})
    driver = Driver(a["url"], cfg, a["slots"], a["t0"], a["worker"], a["level_tag"])

    async def lines() -> str:
        return await asyncio.to_thread(sys.stdin.readline)

    stats = asyncio.run(driver.run(lines))
    # Not ``asdict``: it rebuilds a Counter from (key, count) pairs, counting the pairs.
    out = {f.name: getattr(stats, f.name) for f in fields(stats)}
    print(json.dumps({k: dict(v) if isinstance(v, dict) else v for k, v in out.items()}))
    return 0


# --- measuring the processes --------------------------------------------------------------------


def _proc_times(pid: int, children: bool = False) -> float:
    """CPU seconds of a process (with ``children``: plus its reaped children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def _rss_kb(pid: int) -> int:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KB


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
    return out


@dataclass
class Process:
    """A measured process: a service, the broker's JVM, or PostgreSQL with its backends."""

    name: str
    pid: int
    tree: bool = False  # PostgreSQL: the postmaster and its children

    def sample(self) -> tuple[float, int]:
        """(CPU seconds so far, RSS kB now)."""
        cpu = _proc_times(self.pid, children=self.tree)
        rss = _rss_kb(self.pid)
        if self.tree:
            for child in _children(self.pid):
                with contextlib.suppress(OSError):
                    cpu += _proc_times(child)
                    rss += _rss_kb(child)
        return cpu, rss


def _pid_from(path: Path) -> int | None:
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


def server_processes(kafka: str, dsn: str) -> list[Process]:
    """The broker and the database, if they were started by the deploy/ scripts here."""
    out: list[Process] = []
    kport = kafka.split(",")[0].rpartition(":")[2]
    pid = _pid_from(Path(f"/tmp/mahjong-planet-kafka-{kport}/kafka.pid"))
    if pid:
        out.append(Process("kafka", pid))
    pport = urlsplit(dsn).port or 5432
    pid = _pid_from(Path(f"/tmp/mahjong-planet-pg-{pport}/postmaster.pid"))
    if pid:
        out.append(Process("postgres", pid, tree=True))
    return out


def _total_lag(text: str) -> float:
    from services.runtime.ops import scrape

    return sum(v for name, _, v in scrape(text) if name == "mahjong_consumer_lag")


def _get(url: str, timeout: float = 5.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bytes(response.read()).decode()
    except (OSError, urllib.error.URLError):
        return None


def lag_now(cluster: Any) -> dict[str, float]:
    """Every service's consumer lag now (the sum over its partitions; the gauge is as of the
    service's last sample)."""
    out: dict[str, float] = {}
    for name in cluster.names():
        text = _get(cluster.url(name, "/metrics"))
        if text is not None:
            out[name] = _total_lag(text)
    return out


def lag_by_partition(cluster: Any) -> dict[str, dict[str, float]]:
    """Every service's ``mahjong_consumer_lag`` per ``topic/partition`` now."""
    from services.runtime.ops import scrape

    out: dict[str, dict[str, float]] = {}
    for name in cluster.names():
        text = _get(cluster.url(name, "/metrics"))
        if text is not None:
            out[name] = {
                f"{labels.get('topic')}/{labels.get('partition')}": v
                for sample, labels, v in scrape(text)
                if sample == "mahjong_consumer_lag"
            }
    return out


def wait_caught_up(
    cluster: Any, timeout: float = 60.0, slack: int = 1, backlogs: tuple[str, ...] = ()
) -> dict[str, float]:
    """Poll until no partition of any service lags by more than ``slack`` records (or
    ``timeout``); the largest lag per service at the last reading. Partitions of the topics
    in ``backlogs`` are left out: their consumers work through a queue at their own pace.

    ``slack`` 1: the gauge compares the next offset to read with the partition's end, and a
    transactional topic (table.events, lobby.events) ends with a commit marker that no
    consumer ever reads, so a caught-up partition can show 1."""
    deadline = time.monotonic() + timeout
    while True:
        lag = {
            n: max((x for tp, x in v.items() if tp.split("/")[0] not in backlogs), default=0.0)
            for n, v in lag_by_partition(cluster).items()
        }
        if all(v <= slack for v in lag.values()) or time.monotonic() > deadline:
            return lag
        time.sleep(1.0)


# --- one level -----------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in parts:
        for k, v in p.items():
            if isinstance(v, list):
                out.setdefault(k, []).extend(v)
            elif isinstance(v, dict):
                c = out.setdefault(k, Counter())
                c.update(v)
            elif k in ("window_s",):
                out[k] = max(out.get(k, 0.0), v)
            else:
                out[k] = out.get(k, 0) + v
    return out


def run_level(cluster: Any, cfg: LevelConfig, level_tag: int = 0) -> dict[str, Any]:
    """Play ``cfg.tables`` tables through the cluster's gateway; the level's figures."""
    url = cluster.instance("gateway").base
    procs = [Process(name, p.pid) for name, p in cluster.procs.items() if p.poll() is None]
    procs += server_processes(cluster.kafka, cluster.postgres)
    workers = max(1, min(cfg.workers, cfg.tables))
    t0 = time.time() + 3.0  # the workers' imports
    shares = [list(range(w, cfg.tables, workers)) for w in range(workers)]
    running = [
        Worker(_spawn_worker(url, cfg, share, t0, w, level_tag)) for w, share in enumerate(shares)
    ]
    try:
        # The window opens once every table plays (the ramp), or at the ramp's deadline.
        deadline = t0 + cfg.ramp + cfg.ramp_timeout_s
        ready = all([w.wait_ready(deadline) for w in running])
        ramp_s = time.time() - t0
        w0 = time.time() + cfg.settle_s
        w1 = w0 + cfg.seconds
        for w in running:
            w.window(w0, w1)
        time.sleep(max(0.0, w0 - time.time()))
        start = {p.name: p.sample() for p in procs if _exists(p.pid)}
        lags: dict[str, list[float]] = {}
        rss_max: dict[str, int] = {n: s[1] for n, s in start.items()}
        began = time.time()
        while time.time() < w1:
            for name, value in lag_now(cluster).items():
                lags.setdefault(name, []).append(value)
            for p in procs:
                with contextlib.suppress(OSError):
                    rss_max[p.name] = max(rss_max.get(p.name, 0), p.sample()[1])
            time.sleep(max(0.0, min(cfg.sample_s, w1 - time.time())))
        end = {p.name: p.sample() for p in procs if _exists(p.pid) and p.name in start}
        elapsed = time.time() - began
        parts = [w.result(cfg.drain_s + 180) for w in running]
    finally:
        for w in running:
            w.kill()
    s = _merge(parts)
    lat: list[float] = s["latencies_ms"]
    seconds = elapsed
    row: dict[str, Any] = {
        "tables": cfg.tables,
        "seconds": round(elapsed, 1),
        "seats_over_gateway": cfg.seats,
        "hands_per_table": cfg.hands,
        "ramp_s": round(ramp_s, 1),
        "all_playing_at_window": ready and s["playing_at_window"] == s["tables"],
        "playing_at_window": s["playing_at_window"],
        "in_flight_at_stop": s["in_flight_at_stop"],
        "load_workers": workers,
        "actions": s["actions"],
        "actions_per_s": round(s["actions"] / seconds, 1),
        "broadcasts_timed": len(lat),
        "p50_ms": round(statistics.median(lat), 1) if lat else None,
        "p90_ms": round(_percentile(lat, 0.90), 1) if lat else None,
        "p99_ms": round(_percentile(lat, 0.99), 1) if lat else None,
        "max_ms": round(max(lat), 1) if lat else None,
        "frames_in_per_s": round(s["frames"] / seconds, 1),
        "hands_finished": s["hands"],
        "hands_finished_total": s["total_hands"],
        "tables_finished_total": s["total_tables"],
        "tables_opened_total": s["total_tables_opened"],
        "actions_total": s["total_actions"],
        "broadcasts_total": s["total_latencies"],
        "unanswered": s["unanswered"],
        "timeouts": s["timeouts"],
        "rejected": dict(s["rejected"]),
        "errors": dict(s["errors"]),
        "http_failures": dict(s["http_failures"]),
        "connect_failures": s["connect_failures"],
        "closed_early": s["closed_early"],
        "unfinished_tables": s["unfinished_tables"],
        "setup_p50_s": round(statistics.median(s["setup_s"]), 2) if s["setup_s"] else None,
        "load_cpu_pct": round(100 * s["cpu_s"] / seconds, 1),
        "load_cpu_pct_per_worker": round(100 * s["cpu_s"] / seconds / workers, 1),
        "load_rss_mb": round(s["max_rss_kb"] / 1024, 1),
        "cpu_pct": {
            n: round(100 * (end[n][0] - start[n][0]) / elapsed, 1) for n in end if n in start
        },
        "rss_mb": {n: round(v / 1024, 1) for n, v in rss_max.items()},
        "lag_max": {n: max(v) for n, v in lags.items()},
        "lag_mean": {n: round(statistics.fmean(v), 1) for n, v in lags.items()},
    }
    row["cpu_pct_total"] = round(sum(row["cpu_pct"].values()) + row["load_cpu_pct"], 1)
    row["lag_max_all"] = max(row["lag_max"].values(), default=0)
    row["held"] = held(row)
    return row


def _exists(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def held(row: dict[str, Any]) -> bool:
    """The level held: p99 under the limit and every action answered."""
    p99 = row.get("p99_ms")
    return (
        p99 is not None
        and p99 < LIMIT_P99_MS
        and not row["unanswered"]
        and bool(row["all_playing_at_window"])
    )


# --- the cluster, the broker, the database --------------------------------------------------------


def make_cluster(
    kafka: str, postgres: str, root: Path, rating_schema: str, scale: dict[str, int] | None = None
) -> Any:
    """A ``Cluster`` on free ports; the gateway believes 127.0.0.1's ``X-Forwarded-For``."""
    mod = cluster_module()
    probe = mod.Cluster(scale=scale or {})
    names = probe.names()
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    return mod.Cluster(
        root=root,
        kafka=kafka,
        postgres=postgres,
        ports=ports,
        scale=scale or {},
        extra_args={
            "gateway": ["--trust-proxy", "127.0.0.1"],
            "rating": ["--pg-schema", rating_schema],
            # The hand history's positions belong to the broker they were read from: each
            # level's cluster (a fresh broker) gets a schema of its own, as the rating does.
            "history": ["--pg-schema", f"history_{rating_schema}"],
        },
    )


def drop_schema(dsn: str, schema: str) -> None:
    async def go() -> None:
        import asyncpg

        conn = await asyncpg.connect(dsn)
        try:
            for name in (schema, f"{schema}_recompute"):
                await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(go())


@contextlib.contextmanager
def running_cluster(
    kafka: str, postgres: str, scale: dict[str, int] | None = None, keep_logs: bool = False
) -> Iterator[Any]:
    """Every service in its own process, ready; stopped (SIGTERM) afterwards."""
    root = Path(tempfile.mkdtemp(prefix="mp-load-"))
    schema = f"rating_load_{uuid.uuid4().hex[:8]}"  # its position starts at offset 0
    cl = make_cluster(kafka, postgres, root, schema, scale)
    cl.create_topics()
    cl.start_all()
    ok = False
    try:
        cl.wait_ready(timeout=120)
        yield cl
        ok = True
    finally:
        cl.stop_all(30)
        with contextlib.suppress(Exception):
            drop_schema(postgres, schema)
            drop_schema(postgres, f"history_{schema}")
        if ok and not keep_logs:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"cluster logs kept in {root / 'logs'}", file=sys.stderr)


def _script(script: Path, action: str, env: dict[str, str]) -> str:
    r = subprocess.run(
        ["bash", str(script), action],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if r.returncode != 0 and action != "status":
        raise RuntimeError(f"{script.name} {action} failed: {r.stderr[-2000:]}{r.stdout}")
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else str(r.returncode)


@dataclass
class Servers:
    """The broker and the database of a bench run; ``own_kafka``: started here, from empty."""

    kafka: str
    dsn: str
    own_kafka: bool
    own_pg: bool
    kafka_env: dict[str, str] = field(default_factory=dict)

    def refresh(self) -> None:
        """A broker from empty again (ours only): no hand, group or clock of an earlier level
        is left. The lobby projection of the database follows (its position would be ahead)."""
        if not self.own_kafka:
            return
        _script(KAFKA_SH, "down", self.kafka_env)
        _script(KAFKA_SH, "up", {**self.kafka_env, "KAFKA_FRESH": "1"})
        if self.own_pg:
            drop_schema(self.dsn, "lobby")


def _running(script: Path, env: dict[str, str]) -> bool:
    r = subprocess.run(
        ["bash", str(script), "status"], env={**os.environ, **env}, capture_output=True
    )
    return r.returncode == 0


@contextlib.contextmanager
def servers() -> Iterator[Servers]:
    """The broker and database: from the environment, or of the bench's own (fresh, on ports
    of its own), stopped and removed afterwards."""
    stack = contextlib.ExitStack()
    with stack:
        kafka = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        kafka_env: dict[str, str] = {}
        if not kafka:
            port = str(_env_int("MAHJONG_LOAD_KAFKA_PORT", 49092))
            kafka_env = {"KAFKA_PORT": port}
            if _running(KAFKA_SH, kafka_env):
                raise RuntimeError(
                    f"a broker already runs on port {port}: stop it (KAFKA_PORT={port} bash "
                    "deploy/kafka/kafka.sh down), set MAHJONG_LOAD_KAFKA_PORT, or set "
                    "KAFKA_BOOTSTRAP_SERVERS"
                )
            stack.callback(shutil.rmtree, Path(f"/tmp/mahjong-planet-kafka-{port}"), True)
            stack.callback(_script, KAFKA_SH, "down", kafka_env)
            kafka = _script(KAFKA_SH, "up", {**kafka_env, "KAFKA_FRESH": "1"})
        dsn = os.environ.get("MAHJONG_POSTGRES_DSN") or os.environ.get("MAHJONG_PG_DSN")
        own_pg = not dsn
        if not dsn:
            port = str(_env_int("MAHJONG_LOAD_PG_PORT", 45432))
            env = {"PG_PORT": port}
            data = Path(f"/tmp/mahjong-planet-pg-{port}")
            if not _running(POSTGRES_SH, env):
                shutil.rmtree(data, ignore_errors=True)  # from empty, like the broker
            stack.callback(shutil.rmtree, data, True)
            stack.callback(_script, POSTGRES_SH, "down", env)
            dsn = _script(POSTGRES_SH, "up", env)
        yield Servers(kafka, dsn, bool(kafka_env), own_pg, kafka_env)


# --- the whole bench -----------------------------------------------------------------------------


def _scale() -> dict[str, int]:
    out = {}
    for part in filter(None, os.environ.get("MAHJONG_LOAD_SCALE", "").split(",")):
        name, _, count = part.partition("=")
        out[name.strip()] = int(count)
    return out


def level(srv: Servers, cfg: LevelConfig, tag: int, first: bool) -> dict[str, Any]:
    """One level on a cluster of its own. On the bench's own broker, from empty (the tables
    of the level before are left mid-hand: their clocks would time them out for minutes);
    on another broker the open tables are played to their end instead (a drain)."""
    if srv.own_kafka and not first:
        srv.refresh()
    if not srv.own_kafka:
        cfg = replace(cfg, drain_s=max(cfg.drain_s, 300.0))
    with running_cluster(srv.kafka, srv.dsn, _scale()) as cluster:
        return run_level(cluster, cfg, level_tag=tag)


def find_limit(
    srv: Servers, rows: dict[int, dict[str, Any]], steps: int, seconds: float
) -> tuple[int, dict[int, dict[str, Any]]]:
    """Bisect between the largest level that held and the smallest that did not."""
    searched: dict[int, dict[str, Any]] = {}
    good = max((t for t, r in rows.items() if r["held"]), default=0)
    bad = min((t for t, r in rows.items() if not r["held"] and t > good), default=None)
    tag = 10
    while bad is not None and steps > 0 and bad - good > max(10, good // 10):
        mid = (good + bad) // 2 if good else max(10, bad // 2)
        if mid in (good, bad):
            break
        row = level(srv, LevelConfig.from_env(mid, seconds=seconds), tag, first=False)
        tag += 1
        searched[mid] = row
        _print_row(f"search {mid}", row)
        if row["held"]:
            good = mid
        else:
            bad = mid
        steps -= 1
    return good, searched


def _print_row(label: str, row: dict[str, Any]) -> None:
    print(
        f"{label:>12}: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, "
        f"{row['actions_per_s']} actions/s, held={row['held']}, "
        f"load clients {row['load_cpu_pct']}% CPU, lag max {row['lag_max_all']}",
        file=sys.stderr,
        flush=True,
    )


def run_all() -> dict[str, Any]:
    levels = [
        int(x) for x in os.environ.get("MAHJONG_LOAD_LEVELS", ",".join(map(str, LEVELS))).split(",")
    ]
    steps = _env_int("MAHJONG_LOAD_SEARCH_STEPS", 3)
    search_s = _env_float("MAHJONG_LOAD_SEARCH_SECONDS", 30.0)
    out: dict[str, Any] = {}
    with servers() as srv:
        rows: dict[int, dict[str, Any]] = {}
        for i, tables in enumerate(levels):
            row = level(srv, LevelConfig.from_env(tables), i, first=i == 0)
            rows[tables] = row
            out[f"load_{tables}_tables"] = row
            _print_row(f"{tables} tables", row)
        limit, searched = find_limit(srv, rows, steps, search_s)
    for tables, row in searched.items():
        out[f"load_search_{tables}_tables"] = row
    every = {**rows, **searched}
    out["load_limit_tables"] = limit
    out["load_limit_first_failing_tables"] = min(
        (t for t, r in every.items() if not r["held"]), default=None
    )
    out["load_limit_p99_ms"] = LIMIT_P99_MS
    cfg = LevelConfig.from_env(1)
    out["load_seats_over_gateway"] = cfg.seats
    out["load_hands_per_table"] = cfg.hands
    out["load_window_s"] = cfg.seconds
    out["load_search_window_s"] = search_s
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def table(results: dict[str, Any]) -> str:
    rows = [(k, v) for k, v in results.items() if isinstance(v, dict)]
    cols = [
        "tables",
        "p50_ms",
        "p99_ms",
        "max_ms",
        "actions_per_s",
        "frames_in_per_s",
        "load_cpu_pct",
        "cpu_pct_total",
        "lag_max_all",
        "unanswered",
        "timeouts",
        "held",
    ]
    lines = ["  ".join(f"{c:>15}" for c in cols)]
    for _, row in rows:
        lines.append("  ".join(f"{_fmt(row.get(c)):>15}" for c in cols))
    lines.append("")
    for name, row in rows:
        per = ", ".join(
            f"{n} {row['cpu_pct'].get(n, 0):.0f}%/{row['rss_mb'].get(n, 0):.0f}MB"
            for n in row["cpu_pct"]
        )
        lines.append(f"{name}: CPU%/RSS {per}; lag mean {row['lag_mean']}")
        bad = {k: row[k] for k in ("rejected", "errors", "http_failures") if row[k]}
        if bad:
            lines.append(f"  problems: {bad}")
    if "load_limit_tables" in results:
        lines.append("")
        lines.append(
            f"largest number of tables at p99 < {LIMIT_P99_MS:.0f} ms: "
            f"{results.get('load_limit_tables')} (first failing: "
            f"{results.get('load_limit_first_failing_tables')})"
        )
    return "\n".join(lines)


def main() -> int:
    results = run_all()
    print(table(results))
    path = Path(os.environ.get("MAHJONG_LOAD_JSON", "load-results.json"))
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        raise SystemExit(worker_main(sys.argv[2]))
    raise SystemExit(main())
