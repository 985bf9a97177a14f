"""The lobby's decisions (RULES.md §9): tables, seats, private codes, Quick Play, and the
life of a one-hand game: found, dealt once everyone is there, over, again by choice."""

from __future__ import annotations

import random
from itertools import count

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import lobby as lb
from schemas.table import StartHand
from services.matchmaking.lobby import (
    DEAL_WAIT_MS,
    Chance,
    Lobby,
    Output,
    allowed_gap,
    apply,
    decide,
    due,
    match_queue,
)

T0 = 1_000_000


def chance(seed: int = 1) -> Chance:
    rng = random.Random(seed)
    ids = count()
    return Chance(token=lambda n: f"x{next(ids)}", shuffle=rng.shuffle)


_ids = count()


def ask(lobby: Lobby, request: lb.Request, now: int = T0, c: Chance | None = None) -> Output:
    """Decide and apply; the request must be accepted."""
    out = decide(lobby, request, now, c or chance())
    assert not isinstance(out, lb.RequestRefused), out
    fold(lobby, out)
    return out


def refused(lobby: Lobby, request: lb.Request, now: int = T0) -> str:
    out = decide(lobby, request, now, chance())
    assert isinstance(out, lb.RequestRefused), out
    return out.code


def fold(lobby: Lobby, out: Output) -> None:
    for e in out:
        if not isinstance(e, StartHand):
            apply(lobby, e)


def rid() -> str:
    return f"r{next(_ids)}"


def create(lobby: Lobby, player: str, **options: object) -> str:
    out = ask(
        lobby, lb.CreateTable(player=player, request_id=rid(), options=lb.TableOptions(**options))
    )  # type: ignore[arg-type]
    opened = out[0]
    assert isinstance(opened, lb.TableOpened)
    return opened.table_id


def join(table: str, player: str, code: str | None = None) -> lb.JoinTable:
    return lb.JoinTable(player=player, request_id=rid(), table_id=table, code=code)


def queue(
    player: str, rating: float, after: int | None = None, computers: lb.Strength = "normal"
) -> lb.JoinQueue:
    return lb.JoinQueue(
        player=player, request_id=rid(), rating=rating, computers_after_s=after, computers=computers
    )


def arrive(table: str, player: str) -> lb.ArriveAtTable:
    return lb.ArriveAtTable(player=player, request_id=rid(), table_id=table)


def full_table(lobby: Lobby, **options: object) -> str:
    """A table of ann, bob, cid and dan whose hand has been dealt."""
    table = create(lobby, "ann", **options)
    for p in ("bob", "cid", "dan"):
        ask(lobby, join(table, p))
    for p in ("ann", "bob", "cid", "dan"):
        ask(lobby, arrive(table, p))
    assert lobby.tables[table].stage == "started"
    return table


def finish(lobby: Lobby, table: str, points: dict[str, int] | None = None) -> Output:
    players = list(lobby.tables[table].players)
    scores = points or {}
    return ask(
        lobby,
        lb.TableFinished(
            player="table-service",
            request_id=rid(),
            table_id=table,
            hand_id=f"{table}#1",
            players=players,
            points=[scores.get(p, 0) for p in players],
        ),
    )


def deals(out: Output) -> list[StartHand]:
    return [e for e in out if isinstance(e, StartHand)]


# --- tables ---------------------------------------------------------------------------------


def test_a_created_public_table_is_listed_with_its_creator_seated() -> None:
    lobby = Lobby()
    table = create(lobby, "ann")
    assert [t.table_id for t in lobby.public_tables()] == [table]
    assert lobby.tables[table].seated == ["ann"] and lobby.seated_at("ann") == table


def test_a_private_table_is_never_listed_and_has_an_unguessable_code() -> None:
    lobby = Lobby()
    request = lb.CreateTable(player="ann", request_id=rid(), options=lb.TableOptions(public=False))
    ask(lobby, request, c=Chance())  # the production source of codes
    assert lobby.public_tables() == []
    (table,) = lobby.tables.values()
    assert table.code is not None and len(table.code) >= 16  # 96 random bits, base64


def test_a_private_table_is_joined_only_with_its_code() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", public=False)
    code = lobby.tables[table].code
    assert refused(lobby, join(table, "bob")) == "no_such_table"
    assert refused(lobby, join(table, "bob", "wrong-code-123")) == "no_such_table"
    ask(lobby, join(table, "bob", code))
    assert lobby.tables[table].seated == ["ann", "bob"]


def test_an_odd_invite_code_is_refused_like_a_wrong_one() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", public=False)
    for code in ("ü", "\udcff", "x" * 10_000):
        assert refused(lobby, join(table, "bob", code)) == "no_such_table"


def test_a_full_private_table_refuses_a_wrong_code_as_if_it_did_not_exist() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", public=False)
    code = lobby.tables[table].code
    for p in ("bob", "cid", "dan"):
        ask(lobby, join(table, p, code))
    assert lobby.tables[table].started
    for wrong in (None, "", "wrong-code-123"):
        answer = decide(lobby, join(table, "eve", wrong), T0, chance())
        nowhere = decide(lobby, join("t-nowhere", "eve", wrong), T0, chance())
        assert isinstance(answer, lb.RequestRefused) and isinstance(nowhere, lb.RequestRefused)
        assert answer.code == nowhere.code == "no_such_table"
        assert (answer.reason, answer.params["table_id"]) == (nowhere.reason, table)
    assert refused(lobby, join(table, "eve", code)) == "table_full"  # the right code: full


def test_the_fourth_player_finds_the_table_and_the_deal_waits_for_everyone() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", rated=True, clock="blitz")
    for p in ("bob", "cid"):
        ask(lobby, join(table, p))
    out = ask(lobby, join(table, "dan"))
    found = next(e for e in out if isinstance(e, lb.TableFound))
    assert sorted(found.players) == ["ann", "bob", "cid", "dan"] and found.rated
    assert found.deal_by_ms == T0 + DEAL_WAIT_MS and deals(out) == []
    assert lobby.tables[table].stage == "starting"


def test_the_hand_is_dealt_once_every_human_has_the_table_open() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", rated=True, clock="blitz")
    for p in ("bob", "cid", "dan"):
        ask(lobby, join(table, p))
    for p in ("ann", "bob", "cid"):
        assert deals(ask(lobby, arrive(table, p))) == []
    out = ask(lobby, arrive(table, "dan"))
    started = next(e for e in out if isinstance(e, lb.TableStarted))
    (deal,) = deals(out)
    assert deal.players == started.players and deal.rated and deal.clock == "blitz"
    assert deal.lobby and deal.computer_seats == []
    assert lobby.tables[table].stage == "started"


def test_the_hand_is_dealt_after_ten_seconds_without_everyone() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", clock="bullet")
    for p in ("bob", "cid", "dan"):
        ask(lobby, join(table, p))
    ask(lobby, arrive(table, "ann"))
    assert deals(due(lobby, T0 + DEAL_WAIT_MS - 1, chance())) == []
    out = due(lobby, T0 + DEAL_WAIT_MS, chance())
    assert [d.table_id for d in deals(out)] == [table]
    fold(lobby, out)
    assert lobby.tables[table].stage == "started"


def test_a_repeated_or_late_arrival_changes_nothing() -> None:
    lobby = Lobby()
    table = full_table(lobby)
    assert decide(lobby, arrive(table, "ann"), T0, chance()) == []
    assert decide(lobby, arrive(table, "eve"), T0, chance()) == []


def test_a_started_public_table_stays_listed_until_it_ends() -> None:
    lobby = Lobby()
    table = full_table(lobby, rated=True, clock="blitz")
    assert [t.table_id for t in lobby.public_tables()] == [table]
    finish(lobby, table)
    assert lobby.public_tables() == []


def test_seat_orders_are_drawn_at_random() -> None:
    orders = set()
    for seed in range(20):
        lobby = Lobby()
        table = create(lobby, "ann")
        for p in ("bob", "cid"):
            ask(lobby, join(table, p))
        out = ask(lobby, join(table, "dan"), c=chance(seed))
        orders.add(tuple(next(e for e in out if isinstance(e, lb.TableFound)).players))
    assert len(orders) > 5


def test_a_full_table_refuses_another_player() -> None:
    lobby = Lobby()
    table = create(lobby, "ann")
    for p in ("bob", "cid", "dan"):
        ask(lobby, join(table, p))
    assert refused(lobby, join(table, "eve")) == "table_full"


def test_a_player_cannot_sit_twice() -> None:
    lobby = Lobby()
    table = create(lobby, "ann")
    other = create(lobby, "bob")
    assert refused(lobby, join(table, "bob")) == "already_seated"
    assert refused(lobby, join(other, "ann")) == "already_seated"
    assert refused(lobby, lb.CreateTable(player="ann", request_id=rid())) == "already_seated"


def test_an_untimed_rated_table_is_refused() -> None:
    request = lb.CreateTable(
        player="ann", request_id=rid(), options=lb.TableOptions(rated=True, clock=None)
    )
    assert refused(Lobby(), request) == "rated_needs_clock"


def test_a_rated_table_with_computers_is_refused() -> None:
    request = lb.CreateTable(
        player="ann", request_id=rid(), options=lb.TableOptions(rated=True, computers="easy")
    )
    assert refused(Lobby(), request) == "rated_needs_humans"


def test_leaving_frees_the_seat_and_the_last_one_out_closes_the_table() -> None:
    lobby = Lobby()
    table = create(lobby, "ann")
    ask(lobby, join(table, "bob"))
    ask(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table))
    assert lobby.tables[table].seated == ["ann"] and lobby.seated_at("bob") is None
    out = ask(lobby, lb.LeaveTable(player="ann", request_id=rid(), table_id=table))
    assert isinstance(out[-1], lb.TableClosed) and out[-1].reason == "abandoned"
    assert table not in lobby.tables


def test_leaving_a_table_one_does_not_sit_at_is_refused() -> None:
    lobby = Lobby()
    table = create(lobby, "ann")
    assert refused(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table)) == (
        "not_seated"
    )


def test_computers_fill_the_empty_seats_and_make_the_table_casual() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", computers="strong", clock=None)
    ask(lobby, join(table, "bob"))
    ask(lobby, lb.FillWithComputers(player="ann", request_id=rid(), table_id=table))
    ask(lobby, arrive(table, "ann"))
    (deal,) = deals(ask(lobby, arrive(table, "bob")))
    assert len(deal.computer_seats) == 2 and not deal.rated and deal.clock is None
    assert sorted(p for p in deal.players if p.startswith("computer:strong:")) == [
        "computer:strong:0",
        "computer:strong:1",
    ]


def test_only_the_creator_may_fill_with_computers_and_only_if_allowed() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", computers="easy")
    ask(lobby, join(table, "bob"))
    fill = lb.FillWithComputers(player="bob", request_id=rid(), table_id=table)
    assert refused(lobby, fill) == "not_creator"
    plain = create(lobby, "cid")
    fill = lb.FillWithComputers(player="cid", request_id=rid(), table_id=plain)
    assert refused(lobby, fill) == "no_computers"


def test_a_rated_table_closes_after_one_hand_and_frees_its_players() -> None:
    lobby = Lobby()
    table = full_table(lobby, rated=True, clock="blitz")
    out = finish(lobby, table)
    assert isinstance(out[-1], lb.TableClosed) and out[-1].reason == "finished"
    assert lobby.at == {} and lobby.tables == {}
    ask(lobby, queue("ann", 1500))  # free to queue again at once


def test_a_quick_play_table_plays_one_hand() -> None:
    lobby = Lobby()
    for i in range(4):
        ask(lobby, queue(f"p{i}", 1500))
    out = match_queue(lobby, T0, chance())
    fold(lobby, out)
    (table,) = lobby.tables
    for i in range(4):
        ask(lobby, arrive(table, f"p{i}"))
    finish(lobby, table)
    assert lobby.tables == {} and lobby.at == {}


def test_a_casual_table_deals_again_only_when_every_human_asks() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz")
    before = list(lobby.tables[table].players)
    finish(lobby, table)
    assert lobby.tables[table].stage == "results" and lobby.seated_at("ann") == table
    for p in ("ann", "bob", "cid"):
        assert deals(ask(lobby, lb.PlayAgain(player=p, request_id=rid(), table_id=table))) == []
    (deal,) = deals(ask(lobby, lb.PlayAgain(player="dan", request_id=rid(), table_id=table)))
    assert deal.players == before[1:] + before[:1]  # the seats move on: the dealer rotates
    assert deal.command_id == f"start:{table}#2"
    assert lobby.tables[table].stage == "started"


def test_play_again_is_refused_during_a_hand_and_for_strangers() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz")
    again = lb.PlayAgain(player="ann", request_id=rid(), table_id=table)
    assert refused(lobby, again) == "not_between_hands"
    stranger = lb.PlayAgain(player="eve", request_id=rid(), table_id=table)
    assert refused(lobby, stranger) == "not_seated"


def test_running_totals_add_up_over_the_hands_played_together() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz")
    finish(lobby, table, {"ann": 8, "bob": -8})
    for p in ("ann", "bob", "cid", "dan"):
        ask(lobby, lb.PlayAgain(player=p, request_id=rid(), table_id=table))
    finish(lobby, table, {"ann": -2, "cid": 2})
    t = lobby.tables[table]
    assert t.totals == {"ann": 6, "bob": -8, "cid": 2, "dan": 0} and t.hands_played == 2


def test_a_winner_may_leave_at_once_and_queue_again() -> None:
    lobby = Lobby()
    table = full_table(lobby, rated=True, clock="blitz")
    assert refused(lobby, queue("ann", 1500)) == "already_seated"
    won = lb.PlayerWon(
        player="table-service", request_id=rid(), table_id=table, hand_id="h", winner="ann"
    )
    ask(lobby, won)
    ask(lobby, queue("ann", 1500))  # starting something new leaves the table
    assert lobby.seated_at("ann") is None and "ann" in lobby.queue
    assert lobby.tables[table].stage == "started"  # the others play on


def test_leaving_a_timed_hand_leaves_the_seat_to_the_clock_until_it_ends() -> None:
    lobby = Lobby()
    table = full_table(lobby, rated=True, clock="blitz")
    out = ask(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table))
    assert [type(e) for e in out] == [lb.SeatLeaving]
    assert lobby.seated_at("bob") == table  # not free while the clock plays the seat
    assert refused(lobby, queue("bob", 1500)) == "already_seated"
    finish(lobby, table)
    assert lobby.seated_at("bob") is None


def test_a_player_who_left_a_casual_hand_is_not_in_the_next() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz", computers="easy")
    ask(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table))
    finish(lobby, table)
    assert lobby.tables[table].seated == ["ann", "cid", "dan"]
    for p in ("ann", "cid"):
        ask(lobby, lb.PlayAgain(player=p, request_id=rid(), table_id=table))
    (deal,) = deals(ask(lobby, lb.PlayAgain(player="dan", request_id=rid(), table_id=table)))
    assert "bob" not in deal.players and len(deal.computer_seats) == 1 and not deal.rated


def test_starting_something_new_between_hands_leaves_the_table() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz", computers="easy")
    finish(lobby, table)
    ask(lobby, lb.CreateTable(player="ann", request_id=rid()), c=Chance())
    assert "ann" not in lobby.tables[table].seated and lobby.seated_at("ann") != table


def test_a_human_leaving_between_hands_reopens_a_table_without_computers() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz")
    finish(lobby, table)
    out = ask(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table))
    assert isinstance(out[-1], lb.TableReopened)
    assert lobby.tables[table].stage == "open"
    ask(lobby, join(table, "eve"))
    assert lobby.tables[table].stage == "starting"


def test_the_last_human_ready_when_another_leaves_gets_the_next_hand() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz", computers="easy")
    finish(lobby, table)
    for p in ("ann", "bob", "cid"):
        ask(lobby, lb.PlayAgain(player=p, request_id=rid(), table_id=table))
    out = ask(lobby, lb.LeaveTable(player="dan", request_id=rid(), table_id=table))
    (deal,) = deals(out)
    assert "dan" not in deal.players and len(deal.computer_seats) == 1


def test_an_untimed_hand_others_play_cannot_be_left() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock=None)
    leave = lb.LeaveTable(player="ann", request_id=rid(), table_id=table)
    assert refused(lobby, leave) == "untimed_hand"


def test_leaving_a_practice_hand_closes_the_table() -> None:
    lobby = Lobby()
    table = create(lobby, "ann", clock=None, computers="easy", public=False)
    ask(lobby, lb.FillWithComputers(player="ann", request_id=rid(), table_id=table))
    ask(lobby, arrive(table, "ann"))
    out = ask(lobby, lb.LeaveTable(player="ann", request_id=rid(), table_id=table))
    assert isinstance(out[-1], lb.TableClosed) and lobby.at == {}


def test_a_resent_request_is_decided_once() -> None:
    lobby = Lobby()
    request = lb.CreateTable(player="ann", request_id="same")
    ask(lobby, request)
    assert decide(lobby, request, T0, chance()) == []


# --- Quick Play -----------------------------------------------------------------------------


def test_the_allowed_gap_widens_with_waiting_time() -> None:
    assert allowed_gap(0) == 50
    assert allowed_gap(10_000) == 150
    assert allowed_gap(60_000) == 650
    assert allowed_gap(-5) == 50


def test_four_players_of_close_rating_are_seated_at_a_rated_standard_table() -> None:
    lobby = Lobby()
    for i, r in enumerate((1500, 1510, 1490, 1520)):
        ask(lobby, queue(f"p{i}", r))
    out = match_queue(lobby, T0, chance())
    found = next(e for e in out if isinstance(e, lb.TableFound))
    assert found.rated and found.clock == "standard" and found.computer_seats == []
    fold(lobby, out)
    assert lobby.queue == {} and len(set(lobby.at.values())) == 1


def test_players_far_apart_in_rating_wait_until_the_gap_allows() -> None:
    lobby = Lobby()
    for i, r in enumerate((1500, 1500, 1500, 1700)):
        ask(lobby, queue(f"p{i}", r))
    assert match_queue(lobby, T0 + 10_000, chance()) == []  # gap 150 < 200
    out = match_queue(lobby, T0 + 15_000, chance())  # gap 200
    assert any(isinstance(e, lb.TableFound) for e in out)


def test_the_closest_ratings_are_grouped_together() -> None:
    lobby = Lobby()
    ratings = {
        "a": 1500,
        "b": 1900,
        "c": 1505,
        "d": 1895,
        "e": 1510,
        "f": 1890,
        "g": 1495,
        "h": 1905,
    }
    for p, r in ratings.items():
        ask(lobby, queue(p, r))
    out = match_queue(lobby, T0, chance())
    tables = [set(e.players) for e in out if isinstance(e, lb.TableFound)]
    assert sorted(map(sorted, tables)) == [["a", "c", "e", "g"], ["b", "d", "f", "h"]]


def test_computers_join_a_player_who_opted_in_once_the_time_runs_out() -> None:
    lobby = Lobby()
    ask(lobby, queue("solo", 1500, after=20))
    assert match_queue(lobby, T0 + 19_999, chance()) == []
    out = match_queue(lobby, T0 + 20_000, chance())
    found = next(e for e in out if isinstance(e, lb.TableFound))
    assert len(found.computer_seats) == 3 and not found.rated


def test_quick_play_computers_are_of_the_strength_the_player_asked_for() -> None:
    lobby = Lobby()
    ask(lobby, queue("ann", 1500, after=20))  # normal, as before the choice existed
    ask(lobby, queue("bob", 2400, after=20, computers="expert"))
    ask(lobby, queue("cid", 1000, after=20, computers="easy"))
    ask(lobby, queue("dan", 2300, after=20, computers="expert"))
    out = match_queue(lobby, T0 + 20_000, chance())
    opened = {e.table_id: e.options.computers for e in out if isinstance(e, lb.TableOpened)}
    found = [e for e in out if isinstance(e, lb.TableFound)]
    # Only players who asked for the same computers share a table: bob and dan, the others
    # alone; every table casual, its empty seats computers of that strength.
    humans = {
        opened[f.table_id]: sorted(p for i, p in enumerate(f.players) if i not in f.computer_seats)
        for f in found
    }
    assert humans == {"normal": ["ann"], "expert": ["bob", "dan"], "easy": ["cid"]}
    for f in found:
        assert not f.rated and len(f.computer_seats) == 4 - len(humans[opened[f.table_id]])


def test_a_player_is_never_in_two_queues_or_a_queue_and_a_table() -> None:
    lobby = Lobby()
    ask(lobby, queue("ann", 1500))
    assert refused(lobby, queue("ann", 1500)) == "in_queue"
    assert refused(lobby, lb.CreateTable(player="ann", request_id=rid())) == "in_queue"
    table = create(lobby, "bob")
    assert refused(lobby, join(table, "ann")) == "in_queue"
    assert refused(lobby, queue("bob", 1500)) == "already_seated"


def test_leaving_the_queue_works_and_leaving_twice_is_refused() -> None:
    lobby = Lobby()
    ask(lobby, queue("ann", 1500))
    ask(lobby, lb.LeaveQueue(player="ann", request_id=rid()))
    assert lobby.queue == {}
    assert refused(lobby, lb.LeaveQueue(player="ann", request_id=rid())) == "not_in_queue"


# --- properties -----------------------------------------------------------------------------

PLAYERS = [f"p{i}" for i in range(9)]
actions = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "create",
                "join",
                "leave",
                "queue",
                "unqueue",
                "fill",
                "tick",
                "finish",
                "arrive",
                "again",
                "won",
            ]
        ),
        st.sampled_from(PLAYERS),
        st.integers(0, 5),
        st.integers(1300, 1700),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(actions)
def test_nobody_is_ever_in_two_places_and_no_table_seats_more_than_four(steps: list) -> None:
    lobby, c, now = Lobby(), chance(), T0
    for kind, player, pick, rating in steps:
        now += 3_000
        tables = sorted(lobby.tables)
        table = tables[pick % len(tables)] if tables else "none"
        request: lb.Request | None = {
            "create": lb.CreateTable(
                player=player,
                request_id=rid(),
                options=lb.TableOptions(
                    public=pick % 2 == 0,
                    computers="easy" if pick % 3 else None,
                    rated=pick == 3,
                    clock=None if pick == 4 else "blitz",
                ),
            ),
            "join": join(
                table, player, lobby.tables[table].code if table in lobby.tables else None
            ),
            "leave": lb.LeaveTable(player=player, request_id=rid(), table_id=table),
            "queue": queue(player, rating, after=pick * 10 or None),
            "unqueue": lb.LeaveQueue(player=player, request_id=rid()),
            "fill": lb.FillWithComputers(player=player, request_id=rid(), table_id=table),
            "finish": lb.TableFinished(
                player="table-service",
                request_id=rid(),
                table_id=table,
                players=lobby.tables[table].players if table in lobby.tables else [],
                points=[rating - 1500, 1500 - rating, 0, 0],
            ),
            "arrive": arrive(table, player),
            "again": lb.PlayAgain(player=player, request_id=rid(), table_id=table),
            "won": lb.PlayerWon(
                player="table-service", request_id=rid(), table_id=table, hand_id="h", winner=player
            ),
            "tick": None,
        }[kind]
        out = due(lobby, now, c) if request is None else decide(lobby, request, now, c)
        if not isinstance(out, lb.RequestRefused):
            fold(lobby, out)
        places: dict[str, int] = {}
        for t in lobby.tables.values():
            assert len(t.seated) <= 4
            for p in t.seated:
                places[p] = places.get(p, 0) + 1
        for p in lobby.queue:
            places[p] = places.get(p, 0) + 1
        assert all(n == 1 for n in places.values()), places
        for p, t_id in lobby.at.items():  # the seat index agrees with the tables
            assert p in lobby.tables[t_id].seated
        for t in lobby.tables.values():
            assert t.stage != "open" or not t.ready
            assert all(p in t.seated for p in (*t.present, *t.ready, *t.done, *t.leaving))


def test_a_player_left_at_a_reopened_table_may_start_something_new() -> None:
    lobby = Lobby()
    table = full_table(lobby, clock="blitz")
    finish(lobby, table)
    ask(lobby, lb.LeaveTable(player="bob", request_id=rid(), table_id=table))
    assert lobby.tables[table].stage == "open"
    ask(lobby, queue("ann", 1500))  # not "already_seated": ann never chose to wait there
    assert lobby.seated_at("ann") is None and "ann" not in lobby.tables[table].seated
