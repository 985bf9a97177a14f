"""``LobbyWatcher``: the lobby read model, and requests to matchmaking with their answers.

The gateway never decides anything about tables: it sends a ``schemas.lobby`` request to
``match.requests`` and waits for the matchmaking service's word on it, an event on
``lobby.events`` or a ``RequestRefused`` on ``match.replies`` carrying the request's id.

For the lobby list and a table's seats it keeps its own copy of the lobby, folded from
``lobby.events`` with matchmaking's own pure ``apply`` (``services.matchmaking.lobby``): at
start the newest ``lobby.snapshots`` record and the events after it, then the follower's
records (each offset once). Private tables are in the model (their players need them) but
never in the list, and their invite code is shown to the creator only.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import msgspec

from schemas import lobby as lb
from services.matchmaking.lobby import Lobby, Table, apply
from services.runtime.log import EventLog, Outgoing, Record, read_through
from services.runtime.topics import LOBBY_EVENTS, LOBBY_SNAPSHOTS, MATCH_REPLIES, MATCH_REQUESTS

log = logging.getLogger("mahjong.gateway.lobby")

CLOSED_REMEMBERED = 10_000


class _Snapshot(msgspec.Struct, kw_only=True):
    """``lobby.snapshots`` as matchmaking writes it (its ``Snapshot``)."""

    lobby: Lobby
    next_offset: int


class TableListener(Protocol):
    def lobby_changed(self) -> None: ...


Answer = lb.Event | lb.RequestRefused


class RequestTimeout(Exception):
    """Matchmaking did not answer in time (not running, or far behind)."""


class LobbyWatcher:
    """The lobby as the gateway sees it, and the awaiter of matchmaking's answers."""

    def __init__(self, event_log: EventLog, timeout_s: float = 10.0) -> None:
        self.log = event_log
        self.timeout_s = timeout_s
        self.lobby = Lobby()
        self.position = 0  # next lobby.events offset to fold
        self.closed: OrderedDict[str, str] = OrderedDict()  # table id -> reason
        self.closed_private: set[str] = set()  # of ``closed``: not for strangers' eyes
        self.waiting: dict[str, asyncio.Future[Answer]] = {}
        self.listeners: dict[str, set[TableListener]] = {}
        self.version = 0  # bumped by every folded event (clients poll the lobby)
        self.on_change: Callable[[], None] | None = None

    async def start(self) -> None:
        """Fold the newest snapshot and the events after it."""
        lobby, start = Lobby(), 0
        async for r in read_through(self.log, LOBBY_SNAPSHOTS, 0, 0):
            try:
                snap = msgspec.json.decode(r.value, type=_Snapshot)
            except msgspec.DecodeError:
                log.warning("unreadable lobby snapshot at offset %d", r.offset)
                continue
            lobby, start = snap.lobby, snap.next_offset
        self.lobby, self.position = lobby, start
        async for r in read_through(self.log, LOBBY_EVENTS, 0, start):
            self._fold(r)
        log.info("lobby: %d tables, %d waiting", len(self.lobby.tables), len(self.lobby.queue))

    # --- following ---------------------------------------------------------------------------

    def on_records(self, records: list[Record]) -> None:
        for r in records:
            if r.topic == LOBBY_EVENTS:
                self._fold(r)
            elif r.topic == MATCH_REPLIES:
                try:
                    refused = msgspec.json.decode(r.value, type=lb.RequestRefused)
                except msgspec.DecodeError:
                    continue
                self._answer(refused.request_id, refused)

    def _fold(self, r: Record) -> None:
        if r.offset < self.position:
            return
        self.position = r.offset + 1
        try:
            event = lb.decode_lobby_event(r.value)
        except msgspec.DecodeError:
            log.warning("undecodable lobby event at offset %d", r.offset)
            return
        if isinstance(event, lb.TableClosed):
            was = self.lobby.tables.get(event.table_id)
            if was is not None and not was.options.public:
                self.closed_private.add(event.table_id)
        try:
            apply(self.lobby, event)
        except (KeyError, ValueError):
            log.exception("lobby event at offset %d does not fit the lobby", r.offset)
        self.version += 1
        table_id = getattr(event, "table_id", None)
        if isinstance(event, lb.TableClosed):
            self.closed[event.table_id] = event.reason
            while len(self.closed) > CLOSED_REMEMBERED:
                self.closed_private.discard(self.closed.popitem(last=False)[0])
        if event.request_id:
            self._answer(event.request_id, event)
        if table_id is not None:
            for listener in list(self.listeners.get(table_id, ())):
                listener.lobby_changed()
        if self.on_change is not None:
            self.on_change()

    def _answer(self, request_id: str, answer: Answer) -> None:
        future = self.waiting.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(answer)

    # --- requests ----------------------------------------------------------------------------

    @staticmethod
    def request_id(player: str) -> str:
        return f"{player}:{secrets.token_hex(8)}"

    async def request(self, request: lb.Request) -> Answer:
        """Send ``request`` and wait for the first event or refusal naming its id."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting[request.request_id] = future
        try:
            body = msgspec.json.encode(lb.RequestEnvelope(request=request))
            await self.log.produce([Outgoing(MATCH_REQUESTS, request.player, body)])
            return await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            raise RequestTimeout(request.request_id) from None
        finally:
            self.waiting.pop(request.request_id, None)

    async def tell(self, request: lb.Request) -> None:
        """Send ``request`` without waiting for an answer (a word for matchmaking, such as
        ``ArriveAtTable``, that nobody waits on)."""
        body = msgspec.json.encode(lb.RequestEnvelope(request=request))
        await self.log.produce([Outgoing(MATCH_REQUESTS, request.player, body)])

    # --- reading ----------------------------------------------------------------------------

    def table(self, table_id: str) -> Table | None:
        return self.lobby.tables.get(table_id)

    def public_tables(self) -> list[Table]:
        """Public tables, open or in play, oldest first (never private or Quick Play ones)."""
        tables = [t for t in self.lobby.public_tables() if not t.quick_play]
        return sorted(tables, key=lambda t: t.opened_ms)

    def seated_at(self, player: str) -> str | None:
        return self.lobby.seated_at(player)

    def waiting_since(self, player: str) -> int | None:
        w = self.lobby.queue.get(player)
        return None if w is None else w.since_ms

    def listen(self, table_id: str, listener: TableListener) -> None:
        self.listeners.setdefault(table_id, set()).add(listener)

    def unlisten(self, table_id: str, listener: TableListener) -> None:
        group = self.listeners.get(table_id)
        if group is not None:
            group.discard(listener)
            if not group:
                del self.listeners[table_id]
