"""The lobby as pure state: open tables, seats, the Quick Play queue, and the decisions on
requests. No I/O and no clock of its own: time comes in as milliseconds, chance (table
ids, invite codes, seat orders) through a ``Chance``.

Data flows one way: ``decide(lobby, request)`` → events → ``apply`` → the lobby; the timers
``due(lobby, now)`` (the Quick Play matcher and the deals that waited long enough) are the
other source of events.

A table's life (every game is a single hand, RULES.md; docs/matchmaking.md):

    open ──4 seated / computers / a match──▶ starting ──every human has it open, or 10 s──▶
    started ──the hand ends──▶ closed (rated, Quick Play) | results (casual)
    results ──every human still seated asks to play again──▶ starting (seats move on by one)
    results ──a human leaves a table without computers──▶ open
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from schemas import lobby as lb
from schemas.codes import LobbyCode, SeatingCode
from schemas.table import StartHand
from services.rules import first_seats, is_computer, next_seats, rated, seating_problem

SEATS = 4
QUICK_PLAY = lb.TableOptions(rated=True, clock="standard", public=False)
QUICK_PLAY_COMPUTERS = lb.TableOptions(
    rated=False, clock="standard", public=False, computers="normal"
)
"""A Quick Play table that computers fill, for players who asked for ``normal`` ones."""
RECENT_REQUESTS = 5_000  # request ids remembered to drop a client's resend
DEAL_WAIT_MS = 10_000
"""How long a table that has its players waits for every human's client before it deals
anyway (the clock then runs, as for a player who is away)."""

Stage = Literal["open", "starting", "started", "results"]


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
    seated: list[str] = []  # the humans, in the order they sat down
    stage: Stage = "open"
    players: list[str] = []  # seat order of the current (or last) hand, computers included
    computer_seats: list[int] = []
    opened_ms: int = 0
    deal_by_ms: int = 0  # starting: the deal waits for the clients until then
    present: list[str] = []  # starting: humans whose client has the table open
    done: list[str] = []  # started: humans who have won and left the hand
    leaving: list[str] = []  # started: humans who left; out of the table when it ends
    ready: list[str] = []  # results: humans who asked for the next hand
    totals: dict[str, int] = {}  # points over the hands played together here
    hands_played: int = 0

    @property
    def started(self) -> bool:
        """Its seats are set: a hand is about to be dealt, in play, or just over."""
        return self.stage != "open"

    @property
    def closes_after_hand(self) -> bool:
        """Rated and Quick Play tables play exactly one hand; casual ones offer another."""
        return self.options.rated or self.quick_play


class Waiting(msgspec.Struct, kw_only=True):
    """A player in the Quick Play queue."""

    player: str
    rating: float
    since_ms: int
    computers_after_s: int | None = None
    computers: lb.Strength = "normal"


class Lobby(msgspec.Struct, kw_only=True):
    """Everything matchmaking knows; serialisable as a snapshot."""

    tables: dict[str, Table] = {}
    queue: dict[str, Waiting] = {}  # in joining order
    at: dict[str, str] = {}  # player -> the table they sit at (open or playing)
    recent: list[str] = []  # the latest request ids, oldest first

    def seated_at(self, player: str) -> str | None:
        return self.at.get(player)

    def public_tables(self) -> list[Table]:
        """Public tables, open or in play: the lobby list (a live table is there to watch)."""
        return [t for t in self.tables.values() if t.options.public]


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


def _refuse(request: lb.MatchRequest, code: LobbyCode, reason: str, **params: str | int) -> Refusal:
    return lb.RequestRefused(
        request_id=request.request_id,
        player=request.player,
        code=code,
        reason=reason,
        params=params,
    )


def _free(lobby: Lobby, request: lb.MatchRequest, now: int) -> Output | Refusal:
    """May the player start something new? The events that free them first (leaving a table
    whose hand is over for them), or why not."""
    table_id = lobby.at.get(request.player)
    if table_id is not None:
        table = lobby.tables[table_id]
        # Over for them: between hands, after winning, or at a table reopened between
        # hands (someone left) that they did not choose to wait at.
        if (
            table.stage == "results"
            or request.player in table.done
            or (table.stage == "open" and table.hands_played > 0)
        ):
            # Over for them: starting something new is leaving. The events carry no request
            # id, so the request is answered by what it asked for, not by this leave.
            return _leave_now(lobby, table, request.player, "", now)
        return _refuse(request, "already_seated", "you already have a seat", table_id=table_id)
    if request.player in lobby.queue:
        return _refuse(request, "in_queue", "you are waiting for Quick Play; leave it first")
    return []


def options_problem(options: lb.TableOptions) -> tuple[SeatingCode, str] | None:
    """Why a table cannot be created with these options (RULES.md §8, §9), or None."""
    return seating_problem(options.rated, options.clock, options.computers is not None)


def _create(lobby: Lobby, r: lb.CreateTable, now: int, chance: Chance) -> Output | Refusal:
    problem = options_problem(r.options)
    if problem is not None:
        return _refuse(r, *problem)
    freed = _free(lobby, r, now)
    if isinstance(freed, lb.RequestRefused):
        return freed
    table_id = chance.table_id()
    code = None if r.options.public else chance.code()
    return [
        *freed,
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
    table = lobby.tables.get(r.table_id)
    # Bytes, not str: compare_digest refuses non-ASCII strings, and a player must not be
    # able to break the service with an odd code.
    given = (r.code or "").encode("utf-8", "surrogatepass")
    if table is None or (
        table.code is not None and not secrets.compare_digest(given, table.code.encode())
    ):
        # The same answer as for a table that does not exist: a private table's id and code
        # are both needed, and a wrong code says nothing about which one was wrong (nor
        # whether the table is full).
        return _refuse(r, "no_such_table", "there is no such table", table_id=r.table_id)
    if lobby.at.get(r.player) == r.table_id:
        return _refuse(r, "already_seated", "you already have a seat", table_id=r.table_id)
    if table.started or len(table.seated) >= SEATS:
        return _refuse(r, "table_full", "the table is full", table_id=r.table_id)
    freed = _free(lobby, r, now)
    if isinstance(freed, lb.RequestRefused):
        return freed
    out: Output = [
        *freed,
        lb.SeatTaken(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player),
    ]
    humans = [*table.seated, r.player]
    if len(humans) == SEATS:
        out += _found(table, _draw_seats(table, humans, chance), [], r.request_id, now)
    return out


def _leave(lobby: Lobby, r: lb.LeaveTable, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if table is None or r.player not in table.seated:
        return _refuse(r, "not_seated", "you have no seat at this table", table_id=r.table_id)
    if r.player in table.leaving:
        return []
    if table.stage in ("starting", "started") and r.player not in table.done:
        if table.options.clock is None and any(
            p not in (r.player, *table.done, *table.leaving) for p in table.seated
        ):
            # Nobody's clock would ever play an untimed seat: the others would wait for ever.
            return _refuse(r, "untimed_hand", "an untimed hand cannot be left while others play it")
        if table.options.clock is None:
            # The last human still playing an untimed hand (practice): the table is over.
            return [
                lb.SeatLeft(
                    request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player
                ),
                lb.TableClosed(
                    request_id=r.request_id, at_ms=now, table_id=r.table_id, reason="abandoned"
                ),
            ]
        return [
            lb.SeatLeaving(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player)
        ]
    return _leave_now(lobby, table, r.player, r.request_id, now, chance)


def _leave_now(
    lobby: Lobby,
    table: Table,
    player: str,
    request_id: str,
    now: int,
    chance: Chance | None = None,
) -> Output:
    """``player`` gives up the seat now, and what that does to the table."""
    out: Output = [
        lb.SeatLeft(request_id=request_id, at_ms=now, table_id=table.table_id, player=player)
    ]
    rest = [p for p in table.seated if p != player]
    if table.stage in ("starting", "started"):
        return out  # a winner leaving: the hand goes on without them
    if not any(p not in table.leaving for p in rest):
        reason: Literal["finished", "abandoned"] = "finished" if table.hands_played else "abandoned"
        out.append(
            lb.TableClosed(request_id=request_id, at_ms=now, table_id=table.table_id, reason=reason)
        )
    elif table.stage == "results" and table.options.computers is None:
        out.append(lb.TableReopened(request_id=request_id, at_ms=now, table_id=table.table_id))
    elif table.stage == "results" and all(p in table.ready for p in rest):
        out += _next_hand(table, rest, request_id, now)
    return out


def _fill(lobby: Lobby, r: lb.FillWithComputers, now: int, chance: Chance) -> Output | Refusal:
    table = _open_table(lobby, r, r.table_id)
    if isinstance(table, lb.RequestRefused):
        return table
    if r.player != table.creator:
        return _refuse(r, "not_creator", "only the table's creator can start it early")
    if table.options.computers is None:
        return _refuse(r, "no_computers", "this table does not allow computer players")
    return _found(table, _draw_seats(table, list(table.seated), chance), [], r.request_id, now)


def _join_queue(lobby: Lobby, r: lb.JoinQueue, now: int, chance: Chance) -> Output | Refusal:
    freed = _free(lobby, r, now)
    if isinstance(freed, lb.RequestRefused):
        return freed
    return [
        *freed,
        lb.QueueJoined(
            request_id=r.request_id,
            at_ms=now,
            player=r.player,
            rating=r.rating,
            computers_after_s=r.computers_after_s,
            computers=r.computers,
        ),
    ]


def _leave_queue(lobby: Lobby, r: lb.LeaveQueue, now: int, chance: Chance) -> Output | Refusal:
    if r.player not in lobby.queue:
        return _refuse(r, "not_in_queue", "you are not waiting for Quick Play")
    return [lb.QueueLeft(request_id=r.request_id, at_ms=now, player=r.player)]


def _play_again(lobby: Lobby, r: lb.PlayAgain, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if table is None or r.player not in table.seated:
        return _refuse(r, "not_seated", "you have no seat at this table", table_id=r.table_id)
    if table.stage != "results":
        return _refuse(r, "not_between_hands", "the next hand can be asked for once a hand is over")
    if r.player in table.ready:
        return []
    out: Output = [
        lb.PlayAgainPressed(
            request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player
        )
    ]
    if all(p in (*table.ready, r.player) for p in table.seated):
        out += _next_hand(table, list(table.seated), r.request_id, now)
    return out


def _arrive(lobby: Lobby, r: lb.ArriveAtTable, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if (
        table is None
        or table.stage != "starting"
        or r.player not in table.seated
        or r.player in table.present
    ):
        return []  # a late or repeated word from the gateway changes nothing
    out: Output = [
        lb.PlayerArrived(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.player)
    ]
    if all(p in (*table.present, r.player) for p in table.seated):
        out += _deal(table, r.request_id, now)
    return out


def _player_won(lobby: Lobby, r: lb.PlayerWon, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if table is None or table.stage != "started" or r.winner not in table.seated:
        return []
    if r.winner in table.done:
        return []
    return [lb.PlayerDone(request_id=r.request_id, at_ms=now, table_id=r.table_id, player=r.winner)]


def _finished(lobby: Lobby, r: lb.TableFinished, now: int, chance: Chance) -> Output | Refusal:
    table = lobby.tables.get(r.table_id)
    if table is None or table.stage != "started":
        return []  # already over: the table service's word arrives once, but be safe
    points = dict(zip(r.players, r.points, strict=False))
    out: Output = [
        lb.HandFinished(
            request_id=r.request_id,
            at_ms=now,
            table_id=r.table_id,
            hand_id=r.hand_id,
            points={p: v for p, v in points.items() if not is_computer(p)},
        )
    ]
    staying = [p for p in table.seated if p not in table.leaving]
    if table.closes_after_hand or not staying:
        out.append(
            lb.TableClosed(
                request_id=r.request_id, at_ms=now, table_id=r.table_id, reason="finished"
            )
        )
    elif table.options.computers is None and len(staying) < SEATS:
        out.append(lb.TableReopened(request_id=r.request_id, at_ms=now, table_id=r.table_id))
    return out


_HANDLERS: dict[type[lb.MatchRequest], Callable[..., Output | Refusal]] = {
    lb.CreateTable: _create,
    lb.JoinTable: _join,
    lb.LeaveTable: _leave,
    lb.FillWithComputers: _fill,
    lb.JoinQueue: _join_queue,
    lb.LeaveQueue: _leave_queue,
    lb.TableFinished: _finished,
    lb.PlayAgain: _play_again,
    lb.ArriveAtTable: _arrive,
    lb.PlayerWon: _player_won,
}


# --- seating and dealing --------------------------------------------------------------------


def _draw_seats(table: Table, humans: list[str], chance: Chance) -> list[str]:
    """A first hand's seat order: ``humans`` and computers in the empty seats, at random."""
    return first_seats(humans, table.options.computers or "normal", chance.shuffle)


def _next_hand(table: Table, humans: list[str], request_id: str, now: int) -> Output:
    """The table's next hand: the seats move on by one (so the dealer rotates, RULES.md
    §1), a computer taking any seat a human left. Everyone asked for it at the table, so
    nobody needs waiting for."""
    players = next_seats(table.players, humans, table.options.computers or "normal")
    return _found(table, players, humans, request_id, now)


def _found(
    table: Table, players: list[str], present: list[str], request_id: str, now: int
) -> Output:
    """The table has its players: announce them, and deal once every human has it open."""
    computers = [s for s, p in enumerate(players) if is_computer(p)]
    found = lb.TableFound(
        request_id=request_id,
        at_ms=now,
        table_id=table.table_id,
        players=players,
        computer_seats=computers,
        rated=rated(table.options.rated, computers),
        clock=table.options.clock,
        deal_by_ms=now + DEAL_WAIT_MS,
        present=present,
    )
    humans = [p for p in players if not is_computer(p)]
    if not all(p in present for p in humans):
        return [found]
    dealt = msgspec.structs.replace(table, players=players, computer_seats=computers)
    return [found, *_deal(dealt, request_id, now)]


def _deal(table: Table, request_id: str, now: int) -> Output:
    """Deal the table's next hand to the players it found."""
    computers = list(table.computer_seats)
    is_rated = rated(table.options.rated, computers)
    started = lb.TableStarted(
        request_id=request_id,
        at_ms=now,
        table_id=table.table_id,
        players=list(table.players),
        computer_seats=computers,
        rated=is_rated,
        clock=table.options.clock,
    )
    number = table.hands_played + 1
    deal = StartHand(
        table_id=table.table_id,
        players=list(table.players),
        command_id=f"start:{table.table_id}" + (f"#{number}" if number > 1 else ""),
        clock=table.options.clock,
        rated=is_rated,
        computer_seats=computers,
        pace=table.options.pace,
        lobby=True,
    )
    return [started, deal]


def due(lobby: Lobby, now_ms: int, chance: Chance) -> Output:
    """What time alone decides now: Quick Play tables formed from the queue, and the deal
    of every table that has waited ``DEAL_WAIT_MS`` for its players' clients."""
    out = match_queue(lobby, now_ms, chance)
    for table in lobby.tables.values():
        if table.stage == "starting" and now_ms >= table.deal_by_ms:
            out += _deal(table, "", now_ms)
    return out


def waiting_on_time(lobby: Lobby) -> bool:
    """Whether ``due`` may have something to say later, with no request arriving."""
    return bool(lobby.queue) or any(t.stage == "starting" for t in lobby.tables.values())


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
    # Those who waited long enough sit together only with players who asked for the same
    # computers (in the order they came).
    for strength in dict.fromkeys(w.computers for w in due):
        same = [w for w in due if w.computers == strength]
        options = msgspec.structs.replace(QUICK_PLAY_COMPUTERS, computers=strength)
        for i in range(0, len(same), SEATS):
            out += _quick_table(same[i : i + SEATS], options, now_ms, chance)
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
    return out + _found(table, _draw_seats(table, humans, chance), [], "", now)


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
    elif isinstance(event, lb.QueueJoined):
        lobby.queue[event.player] = Waiting(
            player=event.player,
            rating=event.rating,
            since_ms=event.at_ms,
            computers_after_s=event.computers_after_s,
            computers=event.computers,
        )
    elif isinstance(event, lb.QueueLeft):
        lobby.queue.pop(event.player, None)
    elif isinstance(event, lb.TableClosed):
        table = lobby.tables.pop(event.table_id)
        for player in table.seated:
            if lobby.at.get(player) == event.table_id:
                del lobby.at[player]
    else:
        _apply_to_table(lobby, lobby.tables[event.table_id], event)


def _apply_to_table(lobby: Lobby, table: Table, event: lb.Event) -> None:
    if isinstance(event, lb.SeatTaken):
        table.seated.append(event.player)
        lobby.at[event.player] = table.table_id
    elif isinstance(event, lb.SeatLeft):
        _unseat(lobby, table, event.player)
    elif isinstance(event, lb.SeatLeaving):
        table.leaving.append(event.player)
    elif isinstance(event, lb.TableFound):
        table.stage, table.deal_by_ms = "starting", event.deal_by_ms
        table.players, table.computer_seats = list(event.players), list(event.computer_seats)
        table.present, table.ready, table.done = list(event.present), [], []
    elif isinstance(event, lb.PlayerArrived):
        table.present.append(event.player)
    elif isinstance(event, lb.TableStarted):
        table.stage = "started"
        table.players, table.computer_seats = list(event.players), list(event.computer_seats)
    elif isinstance(event, lb.PlayerDone):
        table.done.append(event.player)
    elif isinstance(event, lb.HandFinished):
        for player, points in event.points.items():
            table.totals[player] = table.totals.get(player, 0) + points
        table.hands_played += 1
        for player in list(table.leaving):
            _unseat(lobby, table, player)
        table.stage, table.done, table.ready, table.present = "results", [], [], []
    elif isinstance(event, lb.PlayAgainPressed):
        table.ready.append(event.player)
    elif isinstance(event, lb.TableReopened):
        table.stage, table.ready, table.players, table.computer_seats = "open", [], [], []


def _unseat(lobby: Lobby, table: Table, player: str) -> None:
    table.seated.remove(player)
    for group in (table.present, table.done, table.leaving, table.ready):
        if player in group:
            group.remove(player)
    if lobby.at.get(player) == table.table_id:
        del lobby.at[player]
