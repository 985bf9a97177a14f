"""``Gateway``: everything one gateway process holds, and its background loops.

One follower reads ``table.events``, ``table.replies``, ``lobby.events``,
``match.replies``, ``analysis.requests`` and ``analysis.results`` and hands each record to
the table watcher, the lobby watcher or the review index. The
routes (``api.py``) and the sockets (``connection.py``) are given the started ``Gateway``
by Litestar's dependency injection (``app.py``); nothing here knows HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import OrderedDict
from typing import Any

from schemas.types import COMPUTER_PREFIX
from services.gateway.accounts import Accounts, AccountStore, open_account_store
from services.gateway.config import GatewayConfig
from services.gateway.history import HandLogs
from services.gateway.limits import Counter, LoginAttempts
from services.gateway.lobby import LobbyWatcher
from services.gateway.ratings import Ratings
from services.gateway.reviews import ReviewIndex
from services.gateway.sessions import SocketSessions
from services.gateway.tables import TableWatcher
from services.history.store import HistoryStore
from services.history.store import open_store as open_history_store
from services.runtime.backoff import away_errors, until_done
from services.runtime.log import EventLog, Follower
from services.runtime.service import Health
from services.runtime.topics import (
    ANALYSIS_REQUESTS,
    ANALYSIS_RESULTS,
    LOBBY_EVENTS,
    MATCH_REPLIES,
    TABLE_EVENTS,
    TABLE_REPLIES,
    TOPICS,
)

log = logging.getLogger("mahjong.gateway")

HOUSEKEEPING_S = 30.0
REVIEW_TOPICS = (ANALYSIS_REQUESTS, ANALYSIS_RESULTS)
NAMES_CACHED = 20_000


class Gateway:
    """Everything one gateway process holds; shared by the routes and sockets."""

    def __init__(
        self,
        event_log: EventLog,
        config: GatewayConfig,
        account_store: AccountStore | None = None,
        listen: socket.socket | None = None,
    ) -> None:
        self.log = event_log
        self.owns_log = False  # start (and so wait for) the log itself: ``mahjong-planet gateway``
        self.listen = listen  # bound and listening already (``mahjong-planet run``)
        self.config = config
        store = account_store or open_account_store(config.postgres_dsn, config.data_dir)
        attempts = LoginAttempts(config.limits.login_free, config.limits.login_cap_s)
        self.accounts = Accounts(store, config.session_ttl_s, config.guest_ttl_s, attempts)
        self.sessions = SocketSessions(store, config.session_check_s)
        self.tables = TableWatcher(event_log)
        self.lobby = LobbyWatcher(event_log, config.request_timeout_s)
        # Players' hands: the history projection's rows (services/history), read only here.
        self.history: HistoryStore = open_history_store(config.postgres_dsn, config.data_dir)
        self.hand_logs = HandLogs(event_log, self.tables, self.history)
        self.ratings = Ratings(event_log, config.postgres_dsn, config.data_dir)
        self.reviews = ReviewIndex(event_log)  # computer reviews of hands (issue 21)
        self.ws_open = Counter()
        self.sockets = 0
        self.commands_sent = 0
        self.ready = asyncio.Event()
        self.follower: Follower | None = None
        self._task: asyncio.Task[None] | None = None
        self._sessions_task: asyncio.Task[None] | None = None
        self._names: OrderedDict[str, str] = OrderedDict()
        self._last_poll = time.monotonic()
        self.port: int | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the stores, start following the log (before any table is loaded, so nothing
        appended meanwhile is missed), rebuild the lobby. While PostgreSQL or the broker is
        away each step is tried again with backoff, not ready meanwhile (the process waits
        instead of exiting for its supervisor to restart it)."""
        away = away_errors()

        async def step(what: str, attempt: Any) -> None:
            await until_done(what, attempt, log, retry_on=away)

        if self.owns_log:
            await step("connecting to the log", self._open_log)
        await step("opening the account store", self.accounts.store.start)
        await step("opening the rating store", self.ratings.start)
        await step("opening the hand history", self.history.start)
        follower = self.log.follower(
            [TABLE_EVENTS, TABLE_REPLIES, LOBBY_EVENTS, MATCH_REPLIES, *REVIEW_TOPICS]
        )
        await step("following the log", follower.start)
        self.follower = follower
        await step("loading the tables", self.tables.start)
        await step("loading the lobby", self.lobby.start)
        await step("loading the reviews", self.reviews.start)
        self._task = asyncio.create_task(self._follow(follower))
        self._sessions_task = asyncio.create_task(self.sessions.run())
        self.ready.set()

    async def _open_log(self) -> None:
        await self.log.start()
        await self.log.create_topics(TOPICS)

    async def stop(self) -> None:
        self.ready.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._sessions_task is not None:
            self._sessions_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sessions_task
        self.sessions.close()
        if self.follower is not None:
            await self.follower.stop()
        await self.ratings.close()
        await self.history.close()
        await self.accounts.store.close()

    async def _follow(self, follower: Follower) -> None:
        housekeeping = time.monotonic()
        while True:
            try:
                records = await follower.poll(0.5)
                self._last_poll = time.monotonic()
                tables = [r for r in records if r.topic in (TABLE_EVENTS, TABLE_REPLIES)]
                lobby = [r for r in records if r.topic in (LOBBY_EVENTS, MATCH_REPLIES)]
                reviews = [r for r in records if r.topic in REVIEW_TOPICS]
                if lobby:
                    self.lobby.on_records(lobby)
                if reviews:
                    self.reviews.on_records(reviews)
                if tables:
                    await self.tables.on_records(tables)
                if time.monotonic() - housekeeping > HOUSEKEEPING_S:
                    housekeeping = time.monotonic()
                    self.tables.drop_idle()
                    self.reviews.forget_old_requests()
                    await self.accounts.store.delete_expired(int(time.time() * 1000))
                if any(w.broken for w in self.tables.tables.values()):
                    await self.tables.reload_broken()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the gateway's follower failed; going on")
                await asyncio.sleep(1.0)

    def healthy(self) -> bool:
        return self.ready.is_set() and time.monotonic() - self._last_poll < 30

    def probe(self) -> Health:
        """For the sampler (``services.runtime.service.Service``): the gateway answers its
        own ``/readyz``; it holds no partitions and watches its clients' tables."""
        return Health(started=self.ready.is_set(), active=len(self.tables.tables))

    # --- helpers for routes and sockets ---------------------------------------------------------

    async def names(self, players: list[str]) -> dict[str, str]:
        """Display names of player ids (computers keep their id; the client names them)."""
        out: dict[str, str] = {}
        missing = []
        for p in players:
            if p.startswith(COMPUTER_PREFIX):
                out[p] = p
            elif p in self._names:
                out[p] = self._names[p]
            else:
                missing.append(p)
        if missing:
            found = await self.accounts.store.accounts(missing)
            for p in missing:
                name = found[p].name if p in found else p
                out[p] = self._names[p] = name
            while len(self._names) > NAMES_CACHED:
                self._names.popitem(last=False)
        return out

    def forget_name(self, player: str) -> None:
        self._names.pop(player, None)

    async def rating_of(self, player: str) -> float:
        return await self.ratings.rating(player)

    async def audit(self) -> Any:
        from services.audit import audit_encoded_hands
        from services.audit.reader import hand_records

        hands = await hand_records(self.log)
        return await asyncio.to_thread(audit_encoded_hands, list(hands.values()), processes=1)
