"""Matchmaking: requests players send (``match.requests``), the lobby's events
(``lobby.events``) and the answers to refused requests (``match.replies``).

Players are named by their account id. The gateway authenticates them and is the only
producer of requests, so ``player`` is trusted here; it also adds the player's current
rating to Quick Play requests (the matchmaking service keeps no ratings of its own).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from schemas import SCHEMA_VERSION, decode_current, decode_with
from schemas.codes import LobbyCode
from schemas.rating import Points
from schemas.types import PlayerId, Ref

Strength = Literal["easy", "normal", "strong", "expert"]
QueueRating = Annotated[float, Meta(ge=-100_000.0, le=100_000.0)]
"""A rating as the gateway adds it to Quick Play requests: finite, and far wider than what
ratings reach (they start at 1500 and have no floor), so no real player is refused."""
ComputersAfter = Annotated[int, Meta(ge=0, le=600)]
"""Seconds to wait for humans before computers fill a Quick Play table: at most 10 minutes."""
ClockPreset = Literal["bullet", "blitz", "standard", "relaxed"]


class TableOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What a table's creator chooses (RULES.md §9).

    ``computers``: the strength of computer players that may fill empty seats, or null for
    none. A table with a computer seat is casual, and so is an untimed table (``clock``
    null); asking for either on a rated table is refused.
    """

    rated: bool = False
    clock: ClockPreset | None = "standard"
    public: bool = True
    computers: Strength | None = None
    pace: Literal["instant", "fast", "normal", "slow"] = "normal"  # the computers' pace


# --- requests (match.requests) -------------------------------------------------------------


class MatchRequest(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Fields every request carries: who asks, and an id to answer and to drop duplicates."""

    player: PlayerId
    request_id: Ref


class CreateTable(MatchRequest, frozen=True, tag="create_table"):
    """Open a table and take its first seat."""

    options: TableOptions = TableOptions()


class JoinTable(MatchRequest, frozen=True, tag="join_table"):
    """Take a seat at an open table; a private table needs its invite ``code``."""

    table_id: Ref
    code: Ref | None = None


class LeaveTable(MatchRequest, frozen=True, tag="leave_table"):
    """Give up one's seat. Before a hand or between hands the seat is free at once; during a
    hand a player who has won leaves at once, anyone else leaves the seat to the clock's
    timeouts and is free when the hand ends (RULES.md §8)."""

    table_id: Ref


class PlayAgain(MatchRequest, frozen=True, tag="play_again"):
    """Between hands at a casual table: deal me in to the next hand. The next hand is dealt
    once every human still seated has asked for it."""

    table_id: Ref


class ArriveAtTable(MatchRequest, frozen=True, tag="arrive_at_table"):
    """Sent by the gateway when a seated human's client has the table open while the table
    waits to deal (``TableFound``): the deal waits for every seated human, or 10 s."""

    table_id: Ref


class FillWithComputers(MatchRequest, frozen=True, tag="fill_with_computers"):
    """The creator starts the table now, computers taking the empty seats."""

    table_id: Ref


class JoinQueue(MatchRequest, frozen=True, tag="join_queue"):
    """Quick Play: wait for a rated ``standard`` table of four humans of close rating.

    ``computers_after_s``: if no table has formed after that long, start a casual table with
    computers in the empty seats, of strength ``computers``.
    """

    rating: QueueRating = 1500.0
    computers_after_s: ComputersAfter | None = None
    computers: Strength = "normal"


class LeaveQueue(MatchRequest, frozen=True, tag="leave_queue"):
    """Stop waiting in the Quick Play queue."""


class TableFinished(MatchRequest, frozen=True, tag="table_finished"):
    """Sent by the table service (``player`` "table-service") in the transaction that ends a
    lobby table's hand, with the hand's result: ``players`` in seat order and their
    ``points``. A rated or Quick Play table closes; a casual one waits for Play again."""

    table_id: Ref
    hand_id: Ref = ""
    players: Annotated[list[PlayerId], Meta(max_length=4)] = []
    points: Annotated[list[Points], Meta(max_length=4)] = []


class PlayerWon(MatchRequest, frozen=True, tag="player_won"):
    """Sent by the table service when a seat of a lobby table has won and so left the hand
    (RULES.md §5): that player may leave the table at once."""

    table_id: Ref
    hand_id: Ref
    winner: PlayerId


Request = (
    CreateTable
    | JoinTable
    | LeaveTable
    | FillWithComputers
    | JoinQueue
    | LeaveQueue
    | TableFinished
    | PlayAgain
    | ArriveAtTable
    | PlayerWon
)


class RequestEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A record on ``match.requests``."""

    request: Request
    v: int = SCHEMA_VERSION


# --- lobby events (lobby.events) ------------------------------------------------------------


class LobbyEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Fields every lobby event carries: the request that caused it ("" for the service's
    own decisions, such as a Quick Play match) and the service's time."""

    request_id: str = ""
    at_ms: int = 0


class PlayerAtTable(LobbyEvent, frozen=True):
    """A lobby event about one player at one table (the fields of the events below)."""

    table_id: str
    player: str


class TableOpened(LobbyEvent, frozen=True, tag="table_opened"):
    """A table was created. ``code`` is set for private tables only; the gateway never shows
    it to anyone but the creator, and private tables never appear in the lobby."""

    table_id: str
    creator: str
    options: TableOptions
    code: str | None = None
    quick_play: bool = False


class SeatTaken(PlayerAtTable, frozen=True, tag="seat_taken"):
    """A player sat down at an open table."""


class SeatLeft(PlayerAtTable, frozen=True, tag="seat_left"):
    """A player left a table (before a hand, between hands, or after winning): free now."""


class SeatLeaving(PlayerAtTable, frozen=True, tag="seat_leaving"):
    """A player left during a hand they are still in: the clock plays their seat, and they
    are free, and out of the table, once the hand ends."""


class TableFound(LobbyEvent, frozen=True, tag="table_found"):
    """The table has its four players (seat order drawn at random, or moved on by one for a
    table's next hand) and waits until every human has it open, or until ``deal_by_ms``."""

    table_id: str
    players: list[str]
    computer_seats: list[int]
    rated: bool
    clock: ClockPreset | None
    deal_by_ms: int
    present: list[str] = []


class PlayerArrived(PlayerAtTable, frozen=True, tag="player_arrived"):
    """A seated human's client has the table open (``ArriveAtTable``)."""


class PlayerDone(PlayerAtTable, frozen=True, tag="player_done"):
    """A player has won and left the current hand; they may leave the table at once."""


class HandFinished(LobbyEvent, frozen=True, tag="hand_finished"):
    """A table's hand ended: its points (by player id) join the table's running totals. A
    casual table then waits for Play again; a rated or Quick Play table closes."""

    table_id: str
    hand_id: str
    points: dict[str, int] = {}


class PlayAgainPressed(PlayerAtTable, frozen=True, tag="play_again_pressed"):
    """A seated human asked for the next hand."""


class TableReopened(LobbyEvent, frozen=True, tag="table_reopened"):
    """Between hands, a human left a table that takes no computers: it is open again for
    others to join, with the remaining players seated."""

    table_id: str


class TableStarted(LobbyEvent, frozen=True, tag="table_started"):
    """A hand is being dealt at the table (its ``start_hand`` goes to ``table.commands`` in
    the same transaction). ``players`` is the seat order; computer seats are named
    ``computer:<strength>:<n>``."""

    table_id: str
    players: list[str]
    computer_seats: list[int]
    rated: bool
    clock: ClockPreset | None


class TableClosed(LobbyEvent, frozen=True, tag="table_closed"):
    """The table is over: its one rated or Quick Play hand ended, or every human left."""

    table_id: str
    reason: Literal["finished", "abandoned"]


class QueueJoined(LobbyEvent, frozen=True, tag="queue_joined"):
    """A player is waiting for Quick Play."""

    player: str
    rating: float
    computers_after_s: int | None = None
    computers: Strength = "normal"


class QueueLeft(LobbyEvent, frozen=True, tag="queue_left"):
    """A player stopped waiting: they left, or were matched (``matched_table``)."""

    player: str
    matched_table: str | None = None


Event = (
    TableOpened
    | SeatTaken
    | SeatLeft
    | TableStarted
    | TableClosed
    | QueueJoined
    | QueueLeft
    | SeatLeaving
    | TableFound
    | PlayerArrived
    | PlayerDone
    | HandFinished
    | PlayAgainPressed
    | TableReopened
)


class LobbyEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """A record on ``lobby.events``."""

    event: Event
    v: int = SCHEMA_VERSION


class RequestRefused(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to a request that changed nothing (``match.replies``): a stable code, its
    parameters, and an English reason (clients translate the code)."""

    request_id: str
    player: str
    code: LobbyCode
    reason: str
    params: dict[str, str | int] = {}
    v: int = SCHEMA_VERSION


_request_decoder = msgspec.json.Decoder(RequestEnvelope)
_event_decoder = msgspec.json.Decoder(LobbyEnvelope)


def decode_request(raw: bytes) -> Request:
    """A request from ``match.requests``; raises ``msgspec.DecodeError`` with the reason."""
    return decode_current(_request_decoder, raw).request


def decode_lobby_event(raw: bytes) -> Event:
    """An event from ``lobby.events``; raises ``msgspec.DecodeError`` saying why not."""
    return decode_with(_event_decoder, raw).event
