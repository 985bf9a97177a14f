"""Hands of every kind for the history stores' list queries (kind, pages, counts), and the
checks both stores (SQLite, PostgreSQL) must pass."""

from __future__ import annotations

from schemas import events as ev
from services.history.fold import EndedHand, TableFacts
from services.history.store import HistoryStore, Step

ME, FRIEND, STRANGER = "p-me", "p-friend", "p-stranger"
# table id -> (kind it makes, public, quick play, computer seats, rated), and hands there.
TABLES = {
    "t-practice": ("practice", False, False, [1, 2, 3], False, 3),
    "t-casual": ("casual", True, False, [], False, 2),
    "t-rated": ("rated", True, False, [], True, 1),
    "t-quick": ("quick_play", True, True, [], True, 1),
    "t-private": ("casual", False, False, [], False, 1),
}


def _seats(table_id: str, computers: list[int]) -> list[str]:
    if computers:
        return [ME, *(f"computer:easy:{s}" for s in computers)]
    if table_id == "t-private":
        return [FRIEND, ME, "p-x", "p-y"]
    return ["p-a", ME, "p-b", "p-c"]


def pages_step() -> Step:
    """Eight hands of ``ME`` of every kind, ended one millisecond apart, round-robin over
    the tables (so that the kinds interleave in time)."""
    facts = [
        TableFacts(t, public, quick, bool(computers), 1)
        for t, (_, public, quick, computers, _, _) in TABLES.items()
    ]
    order = [t for n in range(3) for t, spec in TABLES.items() if n < spec[5]]
    ended = []
    for i, table_id in enumerate(order):
        _, _, _, computers, rated, _ = TABLES[table_id]
        hand_id = f"{table_id}#{i}"
        seats = _seats(table_id, computers)
        start = ev.HandStarted(
            table_id=table_id,
            hand_id=hand_id,
            seq=0,
            preset="sichuan",
            seats=seats,
            rated=rated,
            computer_seats=computers,
        )
        end = ev.HandEnded(
            table_id=table_id,
            hand_id=hand_id,
            seq=99,
            end="wall_exhausted",
            scores=[3, -1, -1, -1],
            placements=[1, 2, 2, 2],
        )
        ended.append(EndedHand(start, end, 0, 10 * i, 10 * i + 9, 1_000 + i, (2, None, None, None)))
    return Step(start={}, end={}, ended=ended, facts=facts)


async def check_pages(store: HistoryStore) -> None:
    """Kinds, pages and counts, with a private table's hands only for its players."""
    assert await store.apply(pages_step()) is not None
    every = await store.hands(ME, ME, 100)
    assert [r.ended_ms for r in every] == sorted((r.ended_ms for r in every), reverse=True)
    assert len(every) == await store.count_hands(ME, ME) == 8
    for kind, want in {
        "practice": 3,
        "casual": 3,
        "rated": 1,
        "quick_play": 1,
    }.items():
        rows = await store.hands(ME, ME, 100, kind=kind)
        assert [r.hand_id for r in rows] == [r.hand_id for r in every if r.kind == kind]
        assert len(rows) == await store.count_hands(ME, ME, kind=kind) == want
    assert [r.hand_id for r in every if r.kind == "rated"] == ["t-rated#2"]
    # Pages: the same order, ``limit`` from ``offset``; past the end, nothing.
    pages = [await store.hands(ME, ME, 3, offset=o) for o in (0, 3, 6, 9)]
    assert [[r.hand_id for r in p] for p in pages] == [
        [r.hand_id for r in every[o : o + 3]] for o in (0, 3, 6, 9)
    ]
    casual = await store.hands(ME, ME, 2, kind="casual", offset=1)
    assert [r.hand_id for r in casual] == [r.hand_id for r in every if r.kind == "casual"][1:3]
    # Before a time, with a kind: the count follows the same filters.
    cut = every[2].ended_ms
    older = await store.hands(ME, ME, 100, before_ms=cut, kind="practice")
    assert all(r.ended_ms < cut and r.kind == "practice" for r in older)
    assert len(older) == await store.count_hands(ME, ME, before_ms=cut, kind="practice") >= 1
    # Someone who did not play the private tables sees neither their hands nor their count;
    # a player of one of them sees that one's.
    public = [r.hand_id for r in every if r.public]
    assert [r.hand_id for r in await store.hands(ME, STRANGER, 100)] == public
    assert await store.count_hands(ME, STRANGER) == len(public) == 4
    assert await store.count_hands(ME, STRANGER, kind="practice") == 0
    assert await store.hands(ME, STRANGER, 100, kind="practice") == []
    friend = [r.hand_id for r in await store.hands(ME, FRIEND, 100)]
    assert friend == [r.hand_id for r in every if r.public or r.table_id == "t-private"]
    assert await store.count_hands(ME, FRIEND) == 5
