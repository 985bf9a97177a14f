"""The gateway's settings: where it listens, where it keeps accounts, its limits.

Secrets come only from the environment, never from the command line or a file in the repo:
``MAHJONG_ADMIN_TOKEN`` (admin endpoints; unset: they are off) and the PostgreSQL DSN of the
account store (``MAHJONG_POSTGRES_DSN`` or ``MAHJONG_PG_DSN``; unset: SQLite in the data
folder).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ADMIN_TOKEN_ENV = "MAHJONG_ADMIN_TOKEN"
DSN_ENV = ("MAHJONG_POSTGRES_DSN", "MAHJONG_PG_DSN")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


@dataclass(frozen=True, slots=True)
class Rate:
    """A token bucket: ``per_s`` tokens a second, at most ``burst`` saved up."""

    per_s: float
    burst: float


@dataclass(frozen=True, slots=True)
class Limits:
    """Rate and size limits on every endpoint and socket (see docs/gateway.md)."""

    http: Rate = Rate(20.0, 60.0)  # per client address, every /api route
    static: Rate = Rate(50.0, 200.0)  # per client address, everything else (client, schema)
    auth: Rate = Rate(0.5, 10.0)  # per client address: register, login, guest
    admin: Rate = Rate(0.2, 3.0)  # per client address
    login_free: int = 5  # logins at one account name before they are slowed (any address)
    login_cap_s: float = 300.0  # the longest wait between two logins at one account name
    max_body_bytes: int = 16 * 1024  # a JSON request body
    ws_frames: Rate = Rate(10.0, 30.0)  # per socket: client frames
    ws_flood_strikes: int = 20  # frames over the limit before the socket is closed (1008)
    ws_max_frame_bytes: int = 8 * 1024  # a larger frame gets an error frame
    ws_hard_max_bytes: int = 64 * 1024  # the server closes the socket (1009) past this
    ws_per_address: int = 24  # open sockets per client address
    ws_hello_timeout_s: float = 10.0
    ws_send_queue: int = 256  # direct frames waiting for a slow client before it is closed


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """Everything the gateway needs to start."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    data_dir: Path = Path("./data")
    postgres_dsn: str | None = None
    admin_token: str | None = None
    session_ttl_s: int = 30 * 24 * 3600
    guest_ttl_s: int = 30 * 24 * 3600
    request_timeout_s: float = 10.0  # waiting for matchmaking's answer
    session_check_s: float = 1.0  # a socket's session is checked in the store this often
    limits: Limits = field(default_factory=Limits)
    trusted_proxies: frozenset[str] = frozenset()  # their X-Forwarded-For is believed
    static_dir: Path | None = None  # the web client; default: the package's static/

    @classmethod
    def from_env(cls, **overrides: object) -> GatewayConfig:
        """Settings with the secrets read from the environment."""
        dsn = next((os.environ[n] for n in DSN_ENV if os.environ.get(n)), None)
        base = cls(
            postgres_dsn=dsn,
            admin_token=os.environ.get(ADMIN_TOKEN_ENV) or None,
        )
        return _replace(base, overrides)


def _replace(config: GatewayConfig, overrides: dict[str, object]) -> GatewayConfig:
    from dataclasses import replace

    return replace(config, **{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]
