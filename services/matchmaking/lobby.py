"""The lobby as pure state: open tables, seats, the Quick Play queue, and the decisions on
requests. No I/O and no clock of its own: time comes in as milliseconds, chance (table
ids, invite codes, seat orders) through a ``Chance``.

Data flows one way: ``decide(lobby, request)`` → events → ``apply`` → the lobby; the Quick
Play matcher ``match_queue(lobby, now)`` is the other source of events.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from schemas import lobby as lb
from schemas.table import StartHand

SEATS = 4
QUICK_PLAY = lb.TableOptions(rated=True, clock="standard", public=False, hands=4)
QUICK_PLAY_COMPUTERS = lb.TableOptions(
    rated=False, clock="standard", public=False, computers="normal", hands=4
)
RECENT_REQUESTS = 5_000  # request ids remembered to drop a client's resend


# --- the rating window of Quick Play ----------------------------------------------------------

GAP_START = 50.0
GAP_PER_S = 10.0


def allowed_gap(waited_ms: int) -> float:
    """How far apart in rating a waiting player may be paired: ±50 at once, 10 points wider
    per second waited (±350 after 30 s, ±650 after a minute). No cap: whoever waits long
    enough is seated, however far their rating is from the others'."""
    return GAP_START + GAP_PER_S * max(0, waited_ms) / 1000


# --- state --------------------------------------------------------------------------------------


class Table(msgspec.Struct, kw_only=True):
    """A table from its opening until it closes."""

    table_id: str
    creator: str
    options: lb.TableOptions
    code: str | None = None
    quick_play: bool = False
    seated: list[str] = []  # in the order they sat down
    started: bool = False
    players: list[str] = []  # seat order, once started
    opened_ms: int = 0


class Waiting(msgspec.Struct, kw_only=True):
    """A player in the Quick Play queue."""

    player: str
    rating: float
    since_ms: int
    computers_after_s: int | None = None


class Lobby(msgspec.Struct, kw_only=True):
    """Everything matchmaking knows; serialisable as a snapshot."""

    tables: dict[str, Table] = {}
    queue: dict[str, Waiting] = {}  # in joining order
    at: dict[str, str] = {}  # player -> the table they sit at (open or playing)
    recent: list[str] = []  # the latest request ids, oldest first

    def seated_at(self, player: str) -> str | None:
        return self.at.get(player)

    def public_tables(self) -> list[Table]:
        """Open, public tables that have not started: the lobby list."""
        return [t for t in self.tables.values() if t.options.public and not t.started]


@dataclass(slots=True)
class Chance:
    """Where new ids and seat orders come from (secrets in production, seeded in tests)."""

    token: Callable[[int], str] = secrets.token_urlsafe
    shuffle: Callable[[list[str]], None] = field(
        default_factory=lambda: secrets.SystemRandom().shuffle
    )

    def table_id(self) -> str:
        return f"t-{self.token(9)}"

    def code(self) -> str:
        return self.token(12)  # 96 bits: unguessable


Output = list[lb.Event | StartHand]
Refusal = lb.RequestRefused


# --- deciding requests --------------------------------------------------------------------------


def decide(lobby: Lobby, request: lb.Request, now_ms: int, chance: Chance) -> Output | Refusal:
    """The events a request causes (with the ``StartHand`` of a table it fills), or why it is
    refused. ``lobby`` is not changed; apply the events."""
    if request.request_id and request.request_id in lobby.recent:
        return []  # a resend of a request already decided
    handler = _HANDLERS[type(request)]
    result: Output | Refusal = handler(lobby, request, now_ms, chance)
    return result


def _refuse(request: lb.MatchRequest, code: str, reason: str, **params: str | int) -> Refusal:
    return lb.RequestRefused(
        request_id=request.request_id,
        player=request.player,
        code=code,
        reason=reason,
        params=params,
    )


def _busy(lobby: Lobby, request: lb.MatchRequest) -> Refusal | None:
    table = lobby.at.get(request.player)
    if table is not None:
        return _refuse(request, "already_seated", "you already have a seat", table_id=table)
    if request.player in lobby.queue:
        return _refuse(request, "in_queue", "you are waiting for Quick Play; leave it first")
    return None


def options_problem(options: lb.TableOptions) -> tuple[str, str] | None:
    """Why a table cannot be created with these options (RULES.md §8, §9), or None."""
    if options.rated and options.clock is None:
        return "rated_needs_clock", "a rated table needs a clock"
    if options.rated and options.computers is not None:
        return "rated_needs_humans", "a rated table is for four humans; computers make it casual"
    if not 1 <= options.hands <= 16:
        return "bad_hands", "a table plays 1 to 16 hands"
    return None


def _create(lobby: Lobby, r: lb.CreateTable, now: int, chance: Chance) -> Output | Refusal:
    busy = _busy(lobby, r)
    if busy is not None:
        return busy
    problem = options_problem(r.options)
    if problem is not None:
        return _refuse(r, *problem)
    table_id = chance.table_id()
    code = None if r.options.public else chance.code()
    return [
        lb.TableOpened(
            request_id=r.request_id,
            at_ms=now,
            table_id=table_id,
            creator=r.player,
            options=r.options,
            code=code,
        ),
        lb.SeatTaken(request_id=r.request_id, at_ms=now, table_id=table_id, player=r.player),
    ]


def _open_table(lobby: Lobby, r: lb.MatchRequest, table_id: str) -> Table | Refusal:
    table = lobby.tables.get(table_id)
    if table is None:
        return _refuse(r, "no_such_table", "there is no such table", table_id=table_id)
    if table.started:
        if isinstance(r, lb.JoinTable):
            return _refuse(r, "table_full", "the table is full and playing", table_id=table_id)
        return _refuse(r, "table_started", "the table has already started", table_id=table_id)
    return table


def _join(lobby: Lobby, r: lb.JoinTable, now: int, chance: Chance) -> Output | Refusal:
    # The code is checked first, before "full" or "started" (a wrong code must tell no more
    # than a table that does not exist). Bytes, not str: compare_digest refuses non-ASCII
    # strings, and a player must not be able to break the service with an odd code.
    given = (r.code or "").encode("utf-8", "surrogatepass")
    found = lobby.tables.get(r.table_id)
    code = found.code if found is not None else None
    if code is not None and not secrets.compare_digest(given, code.encode()):
        # The same answer as for a table that does not exist: a private table's id and code
        # are both needed, and a wrong code says nothing about which one was wrong.
        return _refuse(r, "no_such_table", "there is no such table", table_id=r.table_id)
    table = _open_table(lobby, r, r.table_id)
    if isinstance(table, lb.RequestRefused):
        return table
    busy = _busy(lobby, r)
    if busy is not None:
        return busy
    if len(table.seated) >= SEATS:
        return _refuse(r, "table_full", "the table is full", table_id=r.table_id)
    out: Output = [
        lb.SeatTaken(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player)
    ]
    if len(table.seated) + 1 == SEATS:
        out += _start(table, [*table.seated, r.player], r.request_id, now, chance)
    return out


def _leave(lobby: Lobby, r: lb.LeaveTable, now: int, chance: Chance) -> Output | Refusal:
    table = _open_table(lobby, r, r.table_id)
    if isinstance(table, lb.RequestRefused):
        return table
    if r.player not in table.seated:
        return _refuse(r, "not_seated", "you have no seat at this table", table_id=r.table_id)
    out: Output = [
        lb.SeatLeft(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player)
    ]
    if len(table.seated) == 1:
        out.append(
            lb.TableClosed(
                request_id=r.request_id, at_ms=now, table_id=r.table_id, reason="abandoned"
            )
        )
    return out


def _fill(lobby: Lobby, r: lb.FillWithComputers, now: int, chance: Chance) -> Output | Refusal:
    table = _open_table(lobby, r, r.table_id)
    if isinstance(table, lb.RequestRefused):
        return table
    if r.player != table.creator:
        return _refuse(r, "not_creator", "only the table's creator can start it early")
    if table.options.computers is None:
        return _refuse(r, "no_computers", "this table does not allow computer players")
    return _start(table, list(table.seated), r.request_id, now, chance)


def _join_queue(lobby: Lobby, r: lb.JoinQueue, now: int, chance: Chance) -> Output | Refusal:
    busy = _busy(lobby, r)
    if busy is not None:
        return busy
    return [
        lb.QueueJoined(
            request_id=r.request_id,
            at_ms=now,
            player=r.player,
            rating=r.rating,
            computers_after_s=r.computers_after_s,
        )
    ]


def _leave_queue(lobby: Lobby, r: lb.LeaveQueue, now: int, chance: Chance) -> Output | Refusal:
    if r.player not in lobby.queue:
        return _refuse(r, "not_in_queue", "you are not waiting for Quick Play")
    return [lb.QueueLeft(request_id=r.request_id, at_ms=now, player=r.player)]


def _finished(lobby: Lobby, r: lb.TableFinished, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if table is None or not table.started:
        return []  # already closed: the table service's word arrives once, but be safe
    return [
        lb.TableClosed(request_id=r.request_id, at_ms=now, table_id=r.table_id, reason="finished")
    ]


_HANDLERS: dict[type[lb.MatchRequest], Callable[..., Output | Refusal]] = {
    lb.CreateTable: _create,
    lb.JoinTable: _join,
    lb.LeaveTable: _leave,
    lb.FillWithComputers: _fill,
    lb.JoinQueue: _join_queue,
    lb.LeaveQueue: _leave_queue,
    lb.TableFinished: _finished,
}


def _start(table: Table, humans: list[str], request_id: str, now: int, chance: Chance) -> Output:
    """Seat ``humans`` (computers in the empty seats) in a random order and deal."""
    strength = table.options.computers or "normal"
    players = humans + [f"computer:{strength}:{i}" for i in range(SEATS - len(humans))]
    chance.shuffle(players)
    computers = [s for s, p in enumerate(players) if p.startswith("computer:")]
    rated = table.options.rated and not computers
    started = lb.TableStarted(
        request_id=request_id,
        at_ms=now,
        table_id=table.table_id,
        players=players,
        computer_seats=computers,
        rated=rated,
        clock=table.options.clock,
    )
    deal = StartHand(
        table_id=table.table_id,
        players=players,
        command_id=f"start:{table.table_id}",
        clock=table.options.clock,
        rated=rated,
        computer_seats=computers,
        pace=table.options.pace,
        hands=table.options.hands,
        lobby=True,
    )
    return [started, deal]


# --- Quick Play -----------------------------------------------------------------------------------


def match_queue(lobby: Lobby, now_ms: int, chance: Chance) -> Output:
    """Tables formed from the queue now: groups of four whose ratings lie within every
    member's allowed gap (oldest waiter first, closest ratings preferred); then players whose
    "computers after N seconds" ran out, seated with computers."""
    waiting = list(lobby.queue.values())
    taken: set[str] = set()
    out: Output = []
    for first in waiting:
        if first.player in taken:
            continue
        group = _group_for(first, [w for w in waiting if w.player not in taken], now_ms)
        if group is None:
            continue
        taken.update(w.player for w in group)
        out += _quick_table(group, QUICK_PLAY, now_ms, chance)
    due = [
        w
        for w in waiting
        if w.player not in taken
        and w.computers_after_s is not None
        and now_ms - w.since_ms >= w.computers_after_s * 1000
    ]
    for i in range(0, len(due), SEATS):
        out += _quick_table(due[i : i + SEATS], QUICK_PLAY_COMPUTERS, now_ms, chance)
    return out


def _group_for(first: Waiting, pool: list[Waiting], now_ms: int) -> list[Waiting] | None:
    """``first`` and the three others closest in rating, if the four fit everyone's gap."""
    others = sorted(
        (w for w in pool if w.player != first.player),
        key=lambda w: (abs(w.rating - first.rating), w.since_ms),
    )[: SEATS - 1]
    if len(others) < SEATS - 1:
        return None
    group = [first, *others]
    spread = max(w.rating for w in group) - min(w.rating for w in group)
    if spread > min(allowed_gap(now_ms - w.since_ms) for w in group):
        return None
    return group


def _quick_table(
    group: list[Waiting], options: lb.TableOptions, now: int, chance: Chance
) -> Output:
    table_id = chance.table_id()
    humans = [w.player for w in group]
    table = Table(table_id=table_id, creator=humans[0], options=options, quick_play=True)
    out: Output = [
        lb.TableOpened(
            at_ms=now, table_id=table_id, creator=humans[0], options=options, quick_play=True
        )
    ]
    for w in group:
        out.append(lb.QueueLeft(at_ms=now, player=w.player, matched_table=table_id))
        out.append(lb.SeatTaken(at_ms=now, table_id=table_id, player=w.player))
    return out + _start(table, humans, "", now, chance)


# --- folding events -----------------------------------------------------------------------------


def apply(lobby: Lobby, event: lb.Event) -> None:
    """Fold one lobby event into the state (in place)."""
    if event.request_id:
        lobby.recent.append(event.request_id)
        if len(lobby.recent) > RECENT_REQUESTS:
            del lobby.recent[: len(lobby.recent) - RECENT_REQUESTS]
    if isinstance(event, lb.TableOpened):
        lobby.tables[event.table_id] = Table(
            table_id=event.table_id,
            creator=event.creator,
            options=event.options,
            code=event.code,
            quick_play=event.quick_play,
            opened_ms=event.at_ms,
        )
    elif isinstance(event, lb.SeatTaken):
        lobby.tables[event.table_id].seated.append(event.player)
        lobby.at[event.player] = event.table_id
    elif isinstance(event, lb.SeatLeft):
        lobby.tables[event.table_id].seated.remove(event.player)
        lobby.at.pop(event.player, None)
    elif isinstance(event, lb.TableStarted):
        table = lobby.tables[event.table_id]
        table.started, table.players = True, list(event.players)
    elif isinstance(event, lb.TableClosed):
        table = lobby.tables.pop(event.table_id)
        for player in table.seated:
            if lobby.at.get(player) == event.table_id:
                del lobby.at[player]
    elif isinstance(event, lb.QueueJoined):
        lobby.queue[event.player] = Waiting(
            player=event.player,
            rating=event.rating,
            since_ms=event.at_ms,
            computers_after_s=event.computers_after_s,
        )
    elif isinstance(event, lb.QueueLeft):
        lobby.queue.pop(event.player, None)
