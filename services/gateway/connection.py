"""One WebSocket client at one table.

1. ``hello`` within ``ws_hello_timeout_s`` with a valid session token and a table the
   account may watch: a player of it (seated in the lobby, or in its current hand), or
   anyone for a public table (a spectator, who gets the public view, ``seat_view(state,
   None)``). Anything else closes the socket (1008).
2. Then the server pushes: ``table`` (the lobby's word on the table) when it changes, and
   after every change of the hand the ``events`` the client lacks, as its seat may see them,
   and the ``view``. Pushes are coalesced: a slow client gets the latest view, never a
   backlog.
3. ``command`` frames become ``CommandEnvelope`` records on ``table.commands`` with the
   seat *the gateway* finds for the account in the current hand. Refusals come back from
   ``table.replies`` as ``rejected``.
4. One seat, one driver: a player's ``hello`` takes the seat from any other socket of the
   same account playing the same table on this gateway (a second tab): that socket gets
   ``error opened_elsewhere`` and is closed (1008), and until then its commands are refused.
   Spectators' sockets are left alone.
5. Limits: a token bucket per socket (over it: ``rate_limited`` error frames; persistent
   flooding closes with 1008), a maximum frame size (``too_large`` error frame), malformed
   frames get ``bad_frame`` / ``bad_command`` error frames and the socket stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, cast

import msgspec

from schemas import events as ev
from schemas import lobby as lb
from schemas.codes import Code
from schemas.commands import Command
from schemas.table import CommandEnvelope, CommandRejected
from schemas.table import encode as encode_envelope
from schemas.views import SeatView
from services.gateway import access
from services.gateway import protocol as proto
from services.gateway.accounts import Account
from services.gateway.gateway import Gateway
from services.gateway.limits import TokenBucket
from services.gateway.metrics import COMMANDS_SENT
from services.gateway.sessions import SessionUnchecked
from services.gateway.table_info import table_info
from services.gateway.tables import Watched
from services.rules import HandState, hand_over, seen
from services.runtime.log import Outgoing
from services.runtime.topics import TABLE_COMMANDS

if TYPE_CHECKING:
    from litestar import WebSocket

log = logging.getLogger("mahjong.gateway.ws")

_FILLED_BY_GATEWAY = ("seat", "table_id", "command_id", "hand_id", "decision_seq")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Closing(Exception):
    """The socket is to be closed with an error frame first."""

    def __init__(
        self, code: Code, reason: str, ws_code: int = proto.WS_CLOSE_POLICY, **params: str | int
    ) -> None:
        super().__init__(reason)
        self.code, self.reason, self.ws_code, self.params = code, reason, ws_code, params


class Connection:
    """A WebSocket client (see the module note)."""

    def __init__(self, gateway: Gateway, socket: WebSocket[Any, Any, Any], address: str) -> None:
        self.gateway = gateway
        self.socket = socket
        self.address = address
        self.limits = gateway.config.limits
        self.bucket = TokenBucket(self.limits.ws_frames)
        self.strikes = 0
        self.account: Account | None = None
        self.table_id = ""
        self.watched: Watched | None = None
        self.access: access.Watch | None = None  # what the account is to the table (hello)
        self.outbox: asyncio.Queue[msgspec.Struct] = asyncio.Queue(self.limits.ws_send_queue)
        self.dirty = asyncio.Event()
        self.hand_changed = False
        self.lobby_dirty = False
        self.hand_id: str | None = None
        self.sent = 0  # events of ``hand_id`` the client holds (seq 1..sent)
        self.hidden: set[int] = set()  # seqs it holds hidden or in part (exchange_resolved)
        self.names: dict[str, str] = {}
        self.compact = False  # hello's ``compact``: one ``change`` frame per change
        self.last_view: SeatView | None = None  # the view the client holds (compact)
        self.names_sent: dict[str, str] | None = None
        self.closed = False
        self.prefix = ""
        self.role = ""
        self.closing: Code | None = None  # a code to close with once the outbox is sent
        self.arrived_for = 0  # the deal_by_ms of the deal this socket said it is here for
        self.session_key: str | None = None  # the SHA-256 of the hello's token
        self.ending: Closing | None = None  # the session ended: close with this

    # --- the whole life -------------------------------------------------------------------

    async def run(self) -> None:
        await self.socket.accept()
        writer: asyncio.Task[None] | None = None
        try:
            await self._hello()
            writer = asyncio.create_task(self._writer())
            while not self.closed:
                message: dict[str, Any] = dict(await self.socket.receive())
                if message["type"] == "websocket.disconnect":
                    break
                await self._frame(message)
        except Closing as closing:
            await self._close_with(closing)
        except Exception as exc:
            if not _disconnected(exc):
                log.exception("websocket %s failed", self.address)
        finally:
            self.closed = True
            if writer is not None:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await writer
            self._leave()

    async def _close_with(self, closing: Closing) -> None:
        self.closed = True
        with contextlib.suppress(Exception):
            # Frames queued before the reason to close (a rate_limited before the flood)
            # go first, so the client reads them in the order they happened.
            while not self.outbox.empty():
                await self.socket.send_text(proto.encode(self.outbox.get_nowait()))
            await self.socket.send_text(
                proto.encode(
                    proto.ErrorFrame(
                        code=closing.code, reason=closing.reason, params=closing.params
                    )
                )
            )
            await self.socket.close(closing.ws_code, closing.code)

    def _leave(self) -> None:
        if self.session_key is not None:
            self.gateway.sessions.unbind(self.session_key, self)
        if self.table_id:
            self.gateway.tables.unwatch(self.table_id, self)
            self.gateway.lobby.unlisten(self.table_id, self)

    # --- hello ----------------------------------------------------------------------------

    async def _hello(self) -> None:
        try:
            message = await asyncio.wait_for(self.socket.receive(), self.limits.ws_hello_timeout_s)
        except TimeoutError:
            raise Closing("hello_timeout", "send hello first") from None
        if message["type"] == "websocket.disconnect":
            raise Closing("closed", "closed before hello")
        raw = cast(str | bytes, message.get("text") or message.get("bytes") or "")
        if len(raw) > self.limits.ws_max_frame_bytes:
            raise Closing(
                "too_large",
                "the hello frame is too large",
                proto.WS_CLOSE_TOO_BIG,
                limit=self.limits.ws_max_frame_bytes,
            )
        try:
            frame = proto.decode_client(raw)
        except msgspec.DecodeError as exc:
            raise Closing("bad_frame", f"expected hello: {exc}") from None
        if not isinstance(frame, proto.Hello):
            raise Closing("bad_frame", "the first frame must be hello")
        if frame.v > proto.PROTOCOL_VERSION:
            raise Closing(
                "unsupported_version",
                f"this server speaks protocol {proto.PROTOCOL_VERSION}, not {frame.v}",
                server=proto.PROTOCOL_VERSION,
                client=frame.v,
            )
        account = await self.gateway.accounts.authenticate(frame.token)
        if account is None:
            raise Closing("unauthorized", "log in again: the session is unknown or expired")
        self.session_key = await self.gateway.sessions.bind(frame.token, self)
        if self.session_key is None:
            raise Closing("unauthorized", "log in again: the session is unknown or expired")
        self.account = account
        self.prefix = f"{account.id}/"
        table_id = frame.table_id
        if not table_id or len(table_id) > 100:
            raise Closing("forbidden", "no such table")
        watched = await self.gateway.tables.peek(table_id)
        hand_players = () if watched.state is None else watched.state.players
        self.access = access.watch(self.gateway.lobby, table_id, account.id, hand_players)
        role = self.access.role
        if role is None:
            if self.access.refusal == "table_closed":
                raise Closing("table_closed", "this table has ended")
            raise Closing("forbidden", "this table is private, or there is no such table")
        self.table_id = table_id
        self.compact = frame.compact
        self.watched = await self.gateway.tables.watch(table_id, self)
        self.gateway.lobby.listen(table_id, self)
        if frame.hand_id is not None and frame.hand_id == self.watched.hand_id:
            self._resume(frame.hand_id, frame.last_seq)
        self.role = role
        if role == "player":
            self._take_seat(account.id)
        await self.socket.send_text(
            proto.encode(
                proto.Welcome(
                    v=proto.PROTOCOL_VERSION,
                    table_id=table_id,
                    player=account.id,
                    name=account.name,
                    role=role,
                    server_ms=now_ms(),
                )
            )
        )
        self.lobby_dirty = True
        self.hand_changed = True
        self.dirty.set()

    def _take_seat(self, player: str) -> None:
        """This socket drives the seat now: any other one of the same player at this table
        (another tab, another device) is told and closed."""
        for other in self.gateway.tables.listeners_of(self.table_id):
            if (
                isinstance(other, Connection)
                and other is not self
                and other.role == "player"
                and other.account is not None
                and other.account.id == player
            ):
                other.seat_taken()

    def seat_taken(self) -> None:
        """Another socket of this player opened the table: say so, refuse commands, close."""
        if self.closing is not None:
            return
        self.closing = "opened_elsewhere"
        self._queue(
            proto.ErrorFrame(
                code="opened_elsewhere",
                reason="this seat was opened in another tab or window",
            )
        )

    def _resume(self, hand_id: str, last_seq: int) -> None:
        """A reconnecting client holds ``hand_id`` up to ``last_seq``: send only what follows,
        and again, whole, what it may have received hidden and may see now."""
        assert self.watched is not None
        events = self.watched.events
        self.hand_id = hand_id
        self.sent = max(0, min(last_seq, len(events)))
        seat = self.seat()
        for i in range(self.sent):
            if seen(events[: i + 1], i, seat, False) is not events[i]:
                self.hidden.add(i + 1)

    # --- listening (called by the watchers) ---------------------------------------------------

    def table_changed(self) -> None:
        self.hand_changed = True
        self.dirty.set()

    def lobby_changed(self) -> None:
        self.lobby_dirty = True
        self.dirty.set()

    def command_rejected(self, rejection: CommandRejected) -> None:
        if rejection.command_id.startswith(self.prefix):
            self._queue(
                proto.Rejected(
                    command_id=rejection.command_id[len(self.prefix) :],
                    code=rejection.code,
                    reason=rejection.reason,
                    params=rejection.params,
                )
            )

    def end(self, expired: bool) -> None:
        """The session has ended (logout anywhere, or expiry): the writer closes the socket
        with an error frame; nothing more is read or forwarded."""
        if self.ending is None:
            self.ending = (
                Closing("session_expired", "the session has expired: log in again")
                if expired
                else Closing("session_ended", "the session has ended: log in again")
            )
        self.dirty.set()

    def _queue(self, frame: msgspec.Struct) -> None:
        try:
            self.outbox.put_nowait(frame)
        except asyncio.QueueFull:
            # A client that reads nothing: drop it rather than hold frames without end.
            self.closed = True
        self.dirty.set()

    # --- writing --------------------------------------------------------------------------

    async def _writer(self) -> None:
        try:
            await self._write_loop()
        except Exception as exc:
            if not _disconnected(exc):
                log.exception("websocket %s: writing failed", self.address)
            self.closed = True
            with contextlib.suppress(Exception):
                await self.socket.close(proto.WS_CLOSE_TRY_AGAIN, "server_error")

    async def _write_loop(self) -> None:
        while not self.closed:
            await self.dirty.wait()
            self.dirty.clear()
            if self.ending is not None:
                await self._close_with(self.ending)
                return
            while not self.outbox.empty():
                await self.socket.send_text(proto.encode(self.outbox.get_nowait()))
            if self.closing is not None:
                self.closed = True
                await self.socket.close(proto.WS_CLOSE_POLICY, self.closing)
                return
            if self.lobby_dirty:
                self.lobby_dirty = False
                await self.socket.send_text(proto.encode(await self._table_frame()))
            if self.hand_changed:
                self.hand_changed = False
                for frame in await self._hand_frames():
                    await self.socket.send_text(proto.encode(frame))
        with contextlib.suppress(Exception):
            await self.socket.close(proto.WS_CLOSE_TRY_AGAIN, "slow_client")

    async def _table_frame(self) -> proto.TableFrame:
        assert self.account is not None
        await self._arrive()
        return await table_info(self.gateway, self.table_id, self.account.id, proto.TableFrame)

    async def _arrive(self) -> None:
        """A table that found its players deals once every human has it open: say that this
        one has (once per deal it waits for)."""
        assert self.account is not None
        t = self.gateway.lobby.table(self.table_id)
        if t is None or t.stage != "starting" or self.account.id not in t.seated:
            return
        if self.account.id in t.present or self.arrived_for == t.deal_by_ms:
            return
        self.arrived_for = t.deal_by_ms
        await self.gateway.lobby.tell(
            lb.ArriveAtTable(
                player=self.account.id,
                request_id=f"arrive:{self.table_id}:{t.deal_by_ms}:{self.account.id}",
                table_id=self.table_id,
            )
        )

    def seat(self) -> int | None:
        """The account's seat in the current hand (None: not playing it)."""
        w = self.watched
        return None if w is None or w.state is None else self.seat_in(w.state)

    def seat_in(self, state: HandState) -> int | None:
        """The account's seat in that hand (seats move on by one every hand)."""
        return None if self.account is None else access.seat_in(state.players, self.account.id)

    async def _hand_frames(self) -> list[msgspec.Struct]:
        w = self.watched
        if w is None or w.state is None or not w.events:
            return []
        state, events = w.state, w.events
        if self.access is None or not self.access.sees_hand(self.seat_in(state)):
            return []
        frames: list[msgspec.Struct] = []
        if state.hand_id != self.hand_id:
            last = w.last_hand
            if last is not None and last[0].hand_id == self.hand_id:
                # The next hand was dealt with the end of this one: finish this one first.
                frames += self._delta(last[0], last[1])
            self.hand_id, self.sent, self.hidden = state.hand_id, 0, set()
            self.names = {}
        if not self.names:
            self.names = await self.gateway.names(list(state.players))
        return frames + self._delta(state, events)

    def _delta(self, state: HandState, events: list[ev.Event]) -> list[msgspec.Struct]:
        """The events the client lacks (and hidden ones it may see now), then the view."""
        seat = self.seat_in(state)
        frames: list[msgspec.Struct] = []
        over = hand_over(events)
        out: list[proto.SeenEvent] = []
        # ``seen`` returns the event itself when the seat may see all of it; anything else
        # (hidden, or an exchange with others' tiles left out) is sent again once it is whole.
        for s in sorted(self.hidden):
            item = seen(events, s - 1, seat, over)
            if item is events[s - 1]:
                out.append(item)
                self.hidden.discard(s)
        for i in range(self.sent, len(events)):
            item = seen(events, i, seat, over)
            if item is not events[i]:
                self.hidden.add(events[i].seq)
            out.append(item)
        self.sent = len(events)
        assert self.watched is not None  # _hand_frames sends only for a watched table
        view = self.watched.view(state, seat)
        if self.compact:
            before = self.last_view
            full = before is None or before.hand_id != state.hand_id
            self.last_view = view
            names = {} if self.names_sent == self.names else self.names
            self.names_sent = self.names
            fields, players = proto.view_change(None if full else before, view)
            frames.append(
                proto.ChangeFrame(
                    seq=state.seq,
                    hand_id=state.hand_id,
                    decision_seq=state.decision_seq,
                    events=out,
                    view=fields,
                    players=players,
                    full=full,
                    names=names,
                    server_ms=now_ms(),
                )
            )
            return frames
        if out:
            frames.append(proto.EventsFrame(hand_id=state.hand_id, events=out))
        frames.append(
            proto.ViewFrame(
                seq=state.seq,
                hand_id=state.hand_id,
                decision_seq=state.decision_seq,
                view=view,
                names=self.names,
                server_ms=now_ms(),
            )
        )
        return frames

    # --- reading --------------------------------------------------------------------------

    async def _frame(self, message: dict[str, Any]) -> None:
        raw = message.get("text")
        if raw is None:
            self._error("bad_frame", "send JSON text frames, not binary")
            return
        if not self._allowed():
            return
        if len(raw) > self.limits.ws_max_frame_bytes:
            self._error(
                "too_large",
                f"a frame may have at most {self.limits.ws_max_frame_bytes} bytes",
                limit=self.limits.ws_max_frame_bytes,
            )
            return
        try:
            frame = proto.decode_client(raw)
        except msgspec.DecodeError as exc:
            self._error("bad_frame", str(exc))
            return
        if isinstance(frame, proto.Ping):
            self._queue(proto.Pong(t=frame.t, server_ms=now_ms()))
        elif isinstance(frame, proto.CommandFrame):
            await self._command(frame)
        else:
            self._error("bad_frame", "hello was already received")

    def _allowed(self) -> bool:
        if self.bucket.take():
            self.strikes = 0
            return True
        self.strikes += 1
        if self.strikes > self.limits.ws_flood_strikes:
            raise Closing("flood", "too many frames; the connection is closed")
        if self.strikes == 1:
            self._error(
                "rate_limited",
                "too many frames; this one was dropped",
                per_s=int(self.limits.ws_frames.per_s),
            )
        return False

    def _error(self, code: Code, reason: str, command_id: str | None = None, **params: Any) -> None:
        self._queue(
            proto.ErrorFrame(code=code, reason=reason, params=params, command_id=command_id)
        )

    async def _command(self, frame: proto.CommandFrame) -> None:
        assert self.account is not None
        w = self.watched
        cid = frame.command_id
        if self.closing is not None:
            self._error("opened_elsewhere", "this seat was opened in another tab", cid)
            return
        if w is None or w.state is None:
            self._error("no_hand", "no hand has been dealt at this table yet", cid)
            return
        seat = self.seat()
        if seat is None:
            self._error("not_a_player", "spectators cannot send commands", cid)
            return
        body = dict(frame.body)
        claimed = body.get("seat")
        if claimed is not None and claimed != seat:
            self._error("not_your_seat", "you can act only for your own seat", cid, seat=seat)
            return
        if body.get("type") == "timeout":
            self._error("forbidden_command", "timeouts come from the clock", cid)
            return
        for key in _FILLED_BY_GATEWAY:
            body.pop(key, None)
        body.update(
            seat=seat,
            table_id=self.table_id,
            command_id=self.prefix + cid,
            hand_id=frame.hand_id or w.state.hand_id,
            decision_seq=frame.decision_seq,
        )
        try:
            command = msgspec.convert(body, Command)
        except msgspec.ValidationError as exc:
            self._error("bad_command", str(exc), cid)
            return
        if not await self._session_alive(cid):
            return
        record = Outgoing(
            TABLE_COMMANDS, self.table_id, encode_envelope(CommandEnvelope(command=command))
        )
        await self.gateway.log.produce([record])
        self.gateway.commands_sent += 1
        COMMANDS_SENT.inc()

    async def _session_alive(self, cid: str) -> bool:
        """Whether the session may still send commands (checked in the account store: it may
        have ended on another gateway); a socket whose session has ended is closed."""
        if self.ending is not None or self.session_key is None:
            return False
        try:
            if await self.gateway.sessions.alive(self.session_key):
                return True
        except SessionUnchecked:
            self._error("session_unchecked", "the session could not be checked; try again", cid)
            return False
        if self.ending is None:
            self.end(expired=False)
        return False


def _disconnected(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in ("WebSocketDisconnect", "ClientDisconnected", "ConnectionClosed") or isinstance(
        exc, ConnectionError | asyncio.CancelledError
    )
