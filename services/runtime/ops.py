"""Operations: metrics, health endpoints, structured logs and the periodic samplers.

Every service process serves, on ``--metrics-port`` (0: off), a tiny HTTP endpoint:

- ``GET /metrics``: the Prometheus exposition of this process (prometheus-client's default
  registry: the module-level metrics of the service, the shared ones below, the Python
  process and GC collectors);
- ``GET /healthz``: 200 while the process runs its event loop (liveness);
- ``GET /readyz``: 200 when the service is ready: its ``ready`` event is set and it holds its
  assignment (a consumer-group member with partitions, matchmaking owning the lobby), and,
  for a consumer that stores its position (``services.runtime.progress``: rating, the lobby
  projector), its position is not stalled while records wait; else 503. The body says
  which partitions it holds, and why it is not ready.

All of it is read from the service's ``probe()`` (``services.runtime.service.Service``).

The gateway serves the same three on its own HTTP port (``services/gateway/api.py``).

Logs are one JSON object per line on stderr (``--log-format json``, the default for the
services; ``text`` for people): ``ts``, ``level``, ``logger``, ``msg``, ``service`` and, when
a call passes them with ``extra=``, ``table_id``, ``hand_id`` and friends. Every record at
ERROR or above also counts in ``mahjong_errors_total{logger}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

from services.runtime.progress import STALLED
from services.runtime.service import Health, Service

with contextlib.suppress(Exception):  # prometheus-client >= 0.17
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]

log = logging.getLogger("mahjong.ops")

LOG_FORMAT_ENV = "MAHJONG_LOG_FORMAT"
METRICS_HOST_ENV = "MAHJONG_METRICS_HOST"
SAMPLE_EVERY_S = 5.0
"""How often consumer lag, active tables and readiness are sampled."""

# --- metrics shared by every service ---------------------------------------------------------

CONSUMER_LAG = Gauge(
    "mahjong_consumer_lag",
    "Records between this member's position and the end of an input partition it holds "
    "(sampled every few seconds)",
    ["service", "topic", "partition"],
)
ACTIVE_TABLES = Gauge(
    "mahjong_active_tables",
    "Tables with a hand in progress that this process holds (table: hands it decides; clock: "
    "timed hands it follows; bots: hands with computer seats; matchmaking: started tables in "
    "the lobby; gateway: tables its clients watch)",
    ["service"],
)
ASSIGNED_PARTITIONS = Gauge(
    "mahjong_assigned_partitions", "Input partitions this process holds", ["service"]
)
READY = Gauge("mahjong_ready", "1 when /readyz answers 200", ["service"])
ERRORS = Counter(
    "mahjong_errors", "Log records at ERROR or above (logged exceptions), by logger", ["logger"]
)
COMMAND_ROUNDTRIP = Histogram(
    "mahjong_command_roundtrip_seconds",
    "End to end: from producing a command to table.commands until its first event is read "
    "back from table.events",
    ["source"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Buckets of the latency histograms (seconds)."""


class RoundTrips:
    """Send times of commands awaiting their first event (bounded: answers that never come,
    a rejection, are forgotten oldest first)."""

    def __init__(self, source: str, limit: int = 10_000) -> None:
        self.histogram = COMMAND_ROUNDTRIP.labels(source)
        self.limit = limit
        self.sent_at: dict[str, float] = {}

    def sent(self, command_id: str) -> None:
        self.sent_at[command_id] = time.monotonic()
        if len(self.sent_at) > self.limit:
            del self.sent_at[next(iter(self.sent_at))]

    def seen(self, command_id: str) -> None:
        began = self.sent_at.pop(command_id, None)
        if began is not None:
            self.histogram.observe(time.monotonic() - began)


# --- structured logs -------------------------------------------------------------------------

LOG_FIELDS = (
    "table_id",
    "hand_id",
    "command_id",
    "seat",
    "player",
    "request_id",
    "partition",
    "offset",
    "topic",
    "status",  # the gateway's refused requests: HTTP status, error code, method, path
    "code",
    "method",
    "path",
)
"""Record attributes (``extra=``) copied into a JSON log line when present."""


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, service, known extras, exc."""

    def __init__(self, service: str = "") -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if self.service:
            out["service"] = self.service
        for name in LOG_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                out[name] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exc"] = record.exc_text
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The classic line, with the known extras appended as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [
            f"{n}={record.__dict__[n]}" for n in LOG_FIELDS if record.__dict__.get(n) is not None
        ]
        if not extras:
            return line
        head, sep, tail = line.partition("\n")  # keep a traceback after the extras
        return f"{head} [{' '.join(extras)}]{sep}{tail}"


class ErrorCounter(logging.Handler):
    """Counts every record at ERROR or above in ``mahjong_errors_total``."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        ERRORS.labels(record.name).inc()


def default_log_format(fallback: str = "json") -> str:
    value = os.environ.get(LOG_FORMAT_ENV, "").strip().lower()
    return value if value in ("json", "text") else fallback


def configure_logging(fmt: str = "json", service: str = "", level: int = logging.INFO) -> None:
    """Replace the root logger's handlers: one stderr handler in ``fmt`` (json or text) and
    the error counter. Called once by the CLI for every service subcommand."""
    from services.runtime.backoff import Quieter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service) if fmt == "json" else TextFormatter())
    handler.addFilter(Quieter())  # aiokafka repeats its lines many times a second in an outage
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.addHandler(ErrorCounter())
    root.setLevel(level)
    logging.captureWarnings(True)


# --- what each service looks like from outside ---------------------------------------------


@dataclass(slots=True)
class Probe:
    """A service by the name it reports under: ``/readyz`` and the sampler read its
    ``probe()`` (``services.runtime.service.Health``), nothing else."""

    name: str
    service: Service

    def status(self, health: Health | None = None) -> dict[str, Any]:
        """The ``/readyz`` body: the service, whether it is ready, the partitions it holds
        (when it holds some) and, when its position is stalled, for how long and why."""
        health = health or self.service.probe()
        out: dict[str, Any] = {"service": self.name, "ready": health.ready}
        if health.partitions is not None:
            out["partitions"] = sorted(health.partitions)
        if health.stall is not None and health.stall.stalled:
            out["stalled_s"] = round(health.stall.seconds, 1)
            out["reason"] = health.reason
        return out


class Sampler:
    """Every ``every_s``: consumer lag, active tables, held partitions and readiness."""

    def __init__(self, probe: Probe, every_s: float = SAMPLE_EVERY_S) -> None:
        self.probe = probe
        self.every_s = every_s
        self._lag_labels: set[tuple[str, str, str]] = set()

    async def sample(self) -> None:
        name = self.probe.name
        health = self.probe.service.probe()
        READY.labels(name).set(1 if health.ready else 0)
        if health.partitions is not None:
            ASSIGNED_PARTITIONS.labels(name).set(len(health.partitions))
        if health.active is not None:
            ACTIVE_TABLES.labels(name).set(health.active)
        if health.stall is not None:
            STALLED.labels(name, health.stall.topic).set(round(health.stall.seconds, 1))
        if health.lag is None:
            return
        topic = health.lag.topic
        seen: set[tuple[str, str, str]] = set()
        for partition, lag in (await health.lag.measure()).items():
            labels = (name, topic, str(partition))
            CONSUMER_LAG.labels(*labels).set(lag)
            seen.add(labels)
        for gone in self._lag_labels - seen:  # partitions handed to another member
            with contextlib.suppress(KeyError):
                CONSUMER_LAG.remove(*gone)
        self._lag_labels = seen

    async def run(self) -> None:
        while True:
            try:
                await self.sample()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a broker hiccup: try again next time, not an error
                log.warning("sampling %s failed: %s", self.probe.name, exc)
            await asyncio.sleep(self.every_s)


# --- the HTTP endpoint -----------------------------------------------------------------------


class OpsServer:
    """``/metrics``, ``/healthz`` and ``/readyz`` over plain HTTP/1.1 on asyncio streams."""

    def __init__(self, probe: Probe, host: str = "127.0.0.1", port: int = 0) -> None:
        self.probe = probe
        self.host = host
        self.port = port
        self.started = time.time()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("metrics and health on http://%s:%d/metrics", self.host, self.port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def respond(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for ``GET path``."""
        path = path.split("?", 1)[0]
        if path == "/metrics":
            return 200, CONTENT_TYPE_LATEST, generate_latest()
        if path == "/healthz":
            body = {"ok": True, "service": self.probe.name, "pid": os.getpid()}
            body["uptime_s"] = round(time.time() - self.started, 1)
            return 200, "application/json", json.dumps(body).encode()
        if path == "/readyz":
            status = self.probe.status()
            code = 200 if status["ready"] else 503
            return code, "application/json", json.dumps(status).encode()
        return 404, "text/plain; charset=utf-8", b"not found: /metrics, /healthz, /readyz\n"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            method, path, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if method not in ("GET", "HEAD"):
                status, kind, body = 405, "text/plain; charset=utf-8", b"GET only\n"
            else:
                status, kind, body = self.respond(path)
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed"}.get(
                status, "Service Unavailable"
            )
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
            )
            if method != "HEAD":
                writer.write(body)
            await writer.drain()
        except (TimeoutError, ValueError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


# --- running a service with all of the above ------------------------------------------------


@contextlib.asynccontextmanager
async def observed(
    name: str,
    service: Service,
    metrics_port: int | None = None,
    metrics_host: str | None = None,
    every_s: float = SAMPLE_EVERY_S,
) -> AsyncIterator[OpsServer | None]:
    """The endpoint (when ``metrics_port``) and the sampler around a service's run."""
    probe = Probe(name, service)
    server = None
    if metrics_port:
        host = metrics_host or os.environ.get(METRICS_HOST_ENV) or "127.0.0.1"
        server = OpsServer(probe, host, metrics_port)
        await server.start()
    sampler = asyncio.create_task(Sampler(probe, every_s).run())
    try:
        yield server
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        if server is not None:
            await server.close()


def exit_cleanly_on_sigterm() -> None:
    """Until a service's loop takes the signal over (``stop_on_signals``), SIGTERM exits
    with code 0: an orchestrator may stop a service while it still connects to its log or
    store, and that is a clean stop, not a crash."""

    def leave(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT, so services finish their batch and leave cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def run_service(
    name: str,
    service: Service,
    stop: asyncio.Event,
    args: Any = None,
    *,
    prepare: Callable[[], Awaitable[None]] | None = None,
    **kwargs: Any,
) -> None:
    """``service.run(stop)`` with the ops endpoint and sampler; options from ``args``
    (``--metrics-port``, ``--metrics-host``) when given. ``prepare`` (connecting to the
    log, which may wait for a broker that is away) runs with the endpoint already up, so
    ``/readyz`` answers 503 meanwhile; ``stop`` ends the wait."""
    port = kwargs.pop("metrics_port", getattr(args, "metrics_port", None))
    host = kwargs.pop("metrics_host", getattr(args, "metrics_host", None))
    async with observed(name, service, port, host, **kwargs):
        log.info("%s starting (pid %d)", name, os.getpid())
        if prepare is not None:
            preparing = asyncio.ensure_future(prepare())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({preparing, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not preparing.done():
                preparing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await preparing
                log.info("%s stopped before it started", name)
                return
            preparing.result()
        await service.run(stop)
        log.info("%s stopped cleanly", name)


def add_ops_options(parser: Any, *, metrics: bool = True, log_default: str = "json") -> None:
    """``--log-format`` (and ``--metrics-port``/``--metrics-host`` for a service without an
    HTTP port of its own)."""
    fallback = default_log_format(log_default)
    if parser.epilog is None:
        parser.epilog = (
            "Operations: with --metrics-port, GET /metrics (Prometheus), /healthz (alive) and "
            "/readyz (200 once ready and holding its partitions, else 503) are served on that "
            "port. SIGTERM or SIGINT stops it gracefully: the batch in hand is finished and "
            "committed, the consumer group left, and the exit code is 0. See "
            "docs/operations.md."
            if metrics
            else "Operations: GET /metrics (Prometheus), /healthz and /readyz are served on "
            "--port. SIGTERM or SIGINT stops it gracefully (exit code 0). See "
            "docs/operations.md."
        )
    parser.add_argument(
        "--log-format",
        choices=["json", "text"],
        default=fallback,
        help=f"log lines on stderr: one JSON object per line, or text (default {fallback}; "
        f"also: {LOG_FORMAT_ENV})",
    )
    if metrics:
        parser.add_argument(
            "--metrics-port",
            type=int,
            default=int(os.environ.get("MAHJONG_METRICS_PORT", "0") or 0),
            metavar="PORT",
            help="serve /metrics (Prometheus), /healthz and /readyz on this port "
            "(default 0: off; also: MAHJONG_METRICS_PORT)",
        )
        parser.add_argument(
            "--metrics-host",
            default=None,
            metavar="ADDRESS",
            help=f"address of the metrics port (default 127.0.0.1; also: {METRICS_HOST_ENV}; "
            "0.0.0.0 in containers)",
        )


def scrape(text: str) -> Iterator[tuple[str, dict[str, str], float]]:
    """Samples of a Prometheus text exposition: (name, labels, value). For tests and tools."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, dict(sample.labels), float(sample.value)
