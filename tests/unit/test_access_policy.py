"""The gateway's access policy (``services/gateway/access.py``) on a lobby built by hand: who
may see a table, watch it and as what, see a hand; a private table anyone else asks about
answers exactly as a table that does not exist (the routes' and the socket's answers are in
``tests/security/test_access.py`` and ``tests/service/test_gateway_*.py``)."""

from __future__ import annotations

from typing import Any, cast

from schemas import lobby as lb
from services.gateway import access
from services.gateway.lobby import LobbyWatcher
from services.matchmaking.lobby import Table

PLAYERS = ["ann", "bob", "computer:normal:0", "computer:normal:1"]


def lobby_of(*tables: Table, closed: dict[str, bool] | None = None) -> LobbyWatcher:
    """A lobby read model holding ``tables``; ``closed``: ended table id → was it public."""
    watcher = LobbyWatcher(cast(Any, None))
    for t in tables:
        watcher.lobby.tables[t.table_id] = t
    for table_id, public in (closed or {}).items():
        watcher.closed[table_id] = "ended"
        if not public:
            watcher.closed_private.add(table_id)
    return watcher


def table(table_id: str, public: bool, seated: list[str], players: list[str]) -> Table:
    options = lb.TableOptions(rated=False, clock=None, public=public)
    return Table(table_id=table_id, creator="ann", options=options, seated=seated, players=players)


LOBBY = lobby_of(
    table("pub", True, ["ann"], []),
    table("priv", False, ["ann", "bob"], PLAYERS),
    closed={"ended-pub": True, "ended-priv": False},
)


def test_the_lobbys_word_on_a_table() -> None:
    sees = {
        (table_id, who): access.watch(LOBBY, table_id, who).sees_table
        for table_id in ("pub", "priv", "ended-pub", "ended-priv", "nowhere")
        for who in ("ann", "eve")
    }
    assert sees == {
        ("pub", "ann"): True,
        ("pub", "eve"): True,
        ("priv", "ann"): True,
        ("priv", "eve"): False,  # as for a table that does not exist
        ("ended-pub", "ann"): True,
        ("ended-pub", "eve"): True,
        ("ended-priv", "ann"): False,
        ("ended-priv", "eve"): False,
        ("nowhere", "ann"): False,
        ("nowhere", "eve"): False,
    }


def test_watching_a_table() -> None:
    assert access.watch(LOBBY, "priv", "bob").role == "player"
    assert access.watch(LOBBY, "pub", "eve").role == "spectator"
    stranger = access.watch(LOBBY, "priv", "eve")
    assert stranger.role is None and stranger.refusal == "forbidden"
    ended = access.watch(LOBBY, "ended-pub", "eve")
    assert ended.role is None and ended.refusal == "table_closed"
    assert access.watch(LOBBY, "ended-priv", "eve").refusal == "forbidden"
    # A player of the last hand of an ended table still gets in, as a player.
    assert access.watch(LOBBY, "ended-priv", "ann", PLAYERS).role == "player"
    # Seated at a private table but not in its hand: no hand frames; at a public one, yes.
    assert not access.watch(LOBBY, "priv", "ann").sees_hand(None)
    assert access.watch(LOBBY, "pub", "ann").sees_hand(None)
    assert access.watch(LOBBY, "priv", "ann", PLAYERS).sees_hand(0)


def test_seeing_a_hand() -> None:
    assert access.hand_seat(LOBBY, "priv", PLAYERS, False, "bob") == (True, 1)
    assert access.hand_seat(LOBBY, "priv", PLAYERS, False, "eve") == (False, None)
    assert access.hand_seat(LOBBY, "pub", PLAYERS, False, "eve") == (True, None)
    assert access.hand_seat(LOBBY, "ended-pub", PLAYERS, False, "eve") == (False, None)


def test_a_finished_hand_is_shared_only_from_a_public_table() -> None:
    # A replay link: anyone for a public table's finished hand, open or closed ...
    assert access.hand_seat(LOBBY, "pub", PLAYERS, True, "eve") == (True, None)
    assert access.hand_seat(LOBBY, "ended-pub", PLAYERS, True, "eve") == (True, None)
    # ... a private table's only for its players, open or closed.
    assert access.hand_seat(LOBBY, "priv", PLAYERS, True, "eve") == (False, None)
    assert access.hand_seat(LOBBY, "ended-priv", PLAYERS, True, "eve") == (False, None)
    assert access.hand_seat(LOBBY, "ended-priv", PLAYERS, True, "bob") == (True, 1)
    # A table the lobby forgot: the hand history's word; nobody's word: public.
    assert access.hand_seat(LOBBY, "gone", PLAYERS, True, "eve", public=False) == (False, None)
    assert access.hand_seat(LOBBY, "gone", PLAYERS, True, "eve", public=True) == (True, None)
    assert access.hand_seat(LOBBY, "gone", PLAYERS, True, "eve") == (True, None)
    assert access.seat_in(PLAYERS, "computer:normal:1") == 3
    assert access.seat_in(PLAYERS, "eve") is None
