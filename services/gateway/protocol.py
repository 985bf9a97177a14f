"""The WebSocket protocol between the web client (or any client) and the gateway.

Every frame is one JSON text message with a ``type`` tag. The client opens with ``hello``
naming the protocol version ``v``; the server answers ``welcome`` and then pushes ``view``
and ``events`` frames whenever the table changes. The frame types are msgspec Structs, so
their JSON Schema is generated from the code (``protocol_schema``), like ``schemas/``.

Client → server: ``hello``, ``command``, ``ping``.
Server → client: ``welcome``, ``table``, ``view``, ``events``, ``change``, ``rejected``,
``error``, ``pong``.

A client that says ``compact`` in its ``hello`` (the web client does) gets each change of the
hand as one ``change`` frame instead of an ``events`` and a ``view`` frame: the new events
and only the fields of the view that differ from the view it holds. Half the frames, and a
fraction of the bytes, for the same information (docs/protocol.md).

A table the account may not open (private, or no such table) closes with ``error
forbidden``; a public one that has ended, for anyone who did not play it, with ``error
table_closed`` (an ended private table looks missing).
One seat, one driver: when a player opens its table on a second socket (another tab), the
first gets ``error opened_elsewhere`` and is closed (1008, reason ``opened_elsewhere``);
commands that race it are refused with the same code. Opening the table again (a client's
"use here") moves the seat back the same way. Spectators are never moved.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from schemas.codes import Code, TableCode
from schemas.lobby import TableOptions
from schemas.views import SeatView
from schemas.views import SeenEvent as SeenEvent  # an events frame holds these

PROTOCOL_VERSION = 1
"""The version this gateway speaks. A client sending a newer ``v`` gets ``unsupported_version``."""

CommandId = Annotated[
    str, msgspec.Meta(pattern="^[A-Za-z0-9_.:-]{1,64}$", description="the client's command id")
]


# --- client → server -----------------------------------------------------------------------


class Hello(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="hello"):
    """Open a table: who I am (``token``), which table, and the last event seq I hold.

    ``hand_id`` + ``last_seq``: the client has that hand's events up to ``last_seq`` and gets
    only the ones after it (as this seat may see them). Without them it gets the whole hand.
    ``compact``: send the hand's changes as ``change`` frames (``ChangeFrame``).
    """

    token: str
    table_id: str
    v: int = PROTOCOL_VERSION
    hand_id: str | None = None
    last_seq: int = 0
    compact: bool = False


class CommandFrame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="command"):
    """A hand command for the client's own seat.

    ``body`` is one ``schemas.commands`` command *without* ``seat``, ``table_id`` or
    ``command_id``: e.g. ``{"type": "discard", "tile": "5s"}``. The gateway fills in the seat
    the session holds at this table and never trusts one from the client: a body naming
    another seat is refused (``not_your_seat``). ``decision_seq`` is the ``decision_seq`` of
    the ``view`` the command answers (a command for a decision that has passed is rejected
    as stale, never applied to a later one).
    """

    command_id: CommandId
    body: dict[str, Any]
    decision_seq: int | None = None
    hand_id: str | None = None


class Ping(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="ping"):
    """Keep-alive and clock sync: ``t`` is echoed back in ``pong`` with the server time."""

    t: float = 0.0


ClientFrame = Hello | CommandFrame | Ping


# --- server → client -----------------------------------------------------------------------


class Welcome(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="welcome"):
    """The answer to ``hello``: the protocol version, who you are, your role at the table."""

    v: int
    table_id: str
    player: str
    name: str
    role: Literal["player", "spectator"]
    server_ms: int


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A seated (or waiting) player with a display name. ``rating`` is shown while a table
    that has found its players waits to deal (the "table found" moment); ``present`` says
    whether that player's client has the table open then."""

    player: str
    name: str
    computer: bool = False
    rating: float | None = None
    present: bool = False


TableStatus = Literal["open", "starting", "started", "results", "closed", "unknown"]


class TableInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The table as the lobby knows it (docs/matchmaking.md has its life):

    - ``open``: waiting for players; ``starting``: it has its four players and deals once
      every human has it open, by ``deal_by_ms`` at the latest; ``started``: a hand is in
      play; ``results``: a casual table between hands, waiting until every human still
      seated asked to ``play_again`` (``ready``); ``closed``: over; ``unknown``: no such
      table (or a private one the caller may not see: the same answer).
    - ``totals``: points by player over the ``hands_played`` hands played together here.
    - ``done``: players who have won the hand in play and may leave at once.
    - ``code`` (a private table's invite code) is sent to its creator only.
    """

    table_id: str
    status: TableStatus
    seated: list[SeatInfo] = []
    options: TableOptions | None = None
    creator: str | None = None
    code: str | None = None
    quick_play: bool = False
    rated: bool = False
    play_again: bool = False
    deal_by_ms: int | None = None
    ready: list[str] = []
    done: list[str] = []
    leaving: list[str] = []
    totals: dict[str, int] = {}
    hands_played: int = 0


class TableFrame(TableInfo, frozen=True, kw_only=True, tag_field="type", tag="table"):
    """``TableInfo`` pushed whenever the lobby's word on the table changes."""


class ViewFrame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="view"):
    """What the connection's seat may see now (RULES.md §10), computed by
    ``services.rules.seat_view``. ``decision_seq`` names the pending decision; echo it
    in ``command``. ``names`` maps the hand's player ids to display names."""

    seq: int
    hand_id: str
    decision_seq: int
    view: SeatView
    names: dict[str, str] = {}
    server_ms: int = 0


class EventsFrame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="events"):
    """A hand's events as this seat may see them, in seq order.

    An event sent earlier as ``hidden`` is sent again, whole, once the seat may see it (a
    window's claims when it resolves; everything when the hand ends): replace by ``seq``.
    """

    hand_id: str
    events: list[SeenEvent]


class ChangeFrame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="change"):
    """One change of the hand, for a ``compact`` client: an ``events`` frame and a ``view``
    frame in one.

    ``events`` are as in ``EventsFrame`` (replace by ``seq``). ``view`` holds only the
    top-level fields of the seat's ``SeatView`` that differ from the view this socket sent
    last, and ``players`` the changed fields of each player entry that changed, by its index
    (``"0"``–``"3"``); the client's view is its last one with these fields replaced. ``full``
    says the view is whole (the first of a socket, or of a new hand): take it as it is.
    ``names`` is sent when it changes (the first frame of a hand), else empty: keep the last."""

    seq: int
    hand_id: str
    decision_seq: int
    events: list[SeenEvent] = []
    view: dict[str, Any] = {}
    players: dict[str, dict[str, Any]] = {}
    full: bool = False
    names: dict[str, str] = {}
    server_ms: int = 0


class Rejected(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="rejected"):
    """The table refused a command (``schemas.table.CommandRejected``): a stable ``code``
    with ``params`` for translation, and an English ``reason``."""

    command_id: str
    code: TableCode
    reason: str
    params: dict[str, str | int] = {}


class ErrorFrame(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="error"):
    """A frame the gateway could not take (malformed, too large, too many, not allowed).

    The connection stays open unless the code is one of ``CLOSING_CODES``.
    """

    code: Code
    reason: str
    params: dict[str, str | int] = {}
    command_id: str | None = None


class Pong(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="pong"):
    """The answer to ``ping``: the client's ``t`` and the server's epoch milliseconds."""

    t: float
    server_ms: int


ServerFrame = (
    Welcome | TableFrame | ViewFrame | EventsFrame | ChangeFrame | Rejected | ErrorFrame | Pong
)

CLOSING_CODES: set[Code] = {
    "unsupported_version",
    "unauthorized",
    "forbidden",
    "table_closed",
    "opened_elsewhere",
    "flood",
    "hello_timeout",
}
"""Error codes after which the server closes the socket (code 1008, policy violation)."""

WS_CLOSE_POLICY = 1008
WS_CLOSE_TOO_BIG = 1009
WS_CLOSE_TRY_AGAIN = 1013


# --- coding ----------------------------------------------------------------------------------

_client_decoder = msgspec.json.Decoder(ClientFrame)
_encoder = msgspec.json.Encoder()


def decode_client(raw: str | bytes) -> ClientFrame:
    """A client frame; raises ``msgspec.DecodeError`` (or ``ValidationError``) saying why.

    That is the only exception: JSON nested deeper than msgspec follows (it raises
    ``RecursionError``, even a few KiB deep inside ``body``) and text that is no UTF-8 (lone
    surrogates: ``UnicodeEncodeError``) are decode errors too, so the socket answers them
    with an error frame like any other malformed frame."""
    try:
        return _client_decoder.decode(raw)
    except RecursionError:
        raise msgspec.DecodeError("JSON is nested too deeply") from None
    except UnicodeEncodeError:
        raise msgspec.DecodeError("the frame is not valid UTF-8 text") from None


def view_change(
    before: SeatView | None, after: SeatView
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """What a ``change`` frame carries from ``before`` to ``after``: the view's fields that
    differ, and the changed fields of each player entry that differs, by index (the player
    entries change a little at every move: a discard, a hand count). Without ``before``,
    the whole view. A client replacing these fields of ``before`` holds ``after``."""
    fields = after.__struct_fields__
    if before is None:
        return {f: getattr(after, f) for f in fields}, {}
    view = {
        f: getattr(after, f)
        for f in fields
        if f != "players" and getattr(after, f) != getattr(before, f)
    }
    players: dict[str, dict[str, Any]] = {}
    if len(before.players) != len(after.players):
        view["players"] = after.players
        return view, players
    for i, (old, new) in enumerate(zip(before.players, after.players, strict=True)):
        if old != new:
            players[str(i)] = {
                f: getattr(new, f)
                for f in new.__struct_fields__
                if getattr(new, f) != getattr(old, f)
            }
    return view, players


def changed_view(base: dict[str, Any] | None, change: dict[str, Any]) -> dict[str, Any]:
    """The view (as JSON data) a client holding ``base`` holds after a ``change`` frame (also
    JSON data): what the web client's ``changedView`` does, for Python clients and tests."""
    if change.get("full") or base is None:
        return dict(change["view"])
    view = {**base, **change["view"]}
    players = change.get("players") or {}
    if players:
        view["players"] = [{**p, **players.get(str(i), {})} for i, p in enumerate(view["players"])]
    return view


def encode(frame: msgspec.Struct) -> str:
    """A server frame as the JSON text sent on the socket."""
    return _encoder.encode(frame).decode()


def protocol_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of both directions' frames, generated from the code."""
    schema: dict[str, Any] = msgspec.json.schema(ClientFrame | ServerFrame)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-protocol-version"] = PROTOCOL_VERSION
    schema["x-client-frames"] = ["hello", "command", "ping"]
    schema["x-server-frames"] = ["welcome", "table", "view", "events", "rejected", "error", "pong"]
    return schema
