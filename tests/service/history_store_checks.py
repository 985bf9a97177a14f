"""What both hand-history stores must do with the figures' columns (history migration 2):
a row written before the migration reads with the defaults, new rows keep every fact, and
``figure_rows`` shows a private table's hands only to its players. Used by the SQLite test
(tests/service/test_history_embedded.py) and the PostgreSQL one (tests/integration)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from schemas import events as ev
from schemas.table import EventEnvelope, encode
from services.history.figures import figures
from services.history.fold import EndedHand, HandRow, HandsFold, TableFacts, rows_of
from services.history.port import HistoryStore, Step
from services.rules.scenario import played
from services.runtime.log import Record
from services.runtime.topics import TABLE_EVENTS

SCENARIOS = Path(__file__).parents[1] / "scenarios"
PLAYERS = ["ann", "bob", "cat", "dan"]

OLD_ROW = HandRow(
    hand_id="old#1",
    seat=0,
    player="ann",
    table_id="old",
    ended_ms=5,
    kind="casual",
    rated=False,
    public=True,
    players=PLAYERS,
    score=4,
    placement=1,
    best_fan=2,
    end="three_winners",
    partition=0,
    start_offset=0,
    end_offset=9,
)
"""A row as migration 1 held it (the figures' columns did not exist yet)."""
OLD_COLUMNS = (
    "hand_id, seat, player, table_id, ended_ms, kind, rated, public, players, score, "
    'placement, best_fan, "end", "partition", start_offset, end_offset'
)


def old_values(row: HandRow = OLD_ROW) -> tuple[object, ...]:
    return (
        row.hand_id,
        row.seat,
        row.player,
        row.table_id,
        row.ended_ms,
        row.kind,
        row.rated,
        row.public,
        row.players,
        row.score,
        row.placement,
        row.best_fan,
        row.end,
        row.partition,
        row.start_offset,
        row.end_offset,
    )


def scenario_hand(name: str, table_id: str) -> EndedHand:
    """A conformance scenario's hand as the fold ends it, at table ``table_id`` (the
    scenarios chosen here end the hand themselves)."""
    scenario = json.loads(next(SCENARIOS.glob(f"*/{name}.json")).read_text())
    _, events = played(scenario, players=PLAYERS)
    fold = HandsFold(0)
    for offset, e in enumerate(events):
        moved = msgspec.structs.replace(e, table_id=table_id, hand_id=f"{table_id}#1")
        fold.fold(Record(TABLE_EVENTS, 0, offset, table_id, encode(EventEnvelope(event=moved)), 9))
    (hand,) = fold.take_ended()
    return hand


async def check_figures_columns(store: HistoryStore) -> None:
    """``store`` was started on a file/schema at migration 1 holding ``OLD_ROW``."""
    (old,) = (await store.snapshot()).rows
    assert old == OLD_ROW
    assert (old.won, old.dealt_in, old.flower_pig, old.not_ready) == (None, 0, False, False)
    discard = scenario_hand("wins-three-winners-one-discard", "pub")
    exhausted = scenario_hand("flower-pig-replaces-not-ready-penalty", "priv")
    assert isinstance(exhausted.end, ev.HandEnded) and exhausted.end.end == "wall_exhausted"
    facts = [
        TableFacts("pub", public=True, quick_play=False, computers=False, opened_ms=1),
        TableFacts("priv", public=False, quick_play=False, computers=False, opened_ms=1),
    ]
    applied = await store.apply(Step(start={}, end={}, ended=[discard, exhausted], facts=facts))
    assert applied is not None and applied.rows == 8
    want = rows_of(discard, facts[0]) + rows_of(exhausted, facts[1])
    stored = {(r.hand_id, r.seat): r for r in (await store.snapshot()).rows}
    for row in want:
        assert stored[(row.hand_id, row.seat)] == row
    assert [stored[("pub#1", s)].dealt_in for s in range(4)] == [3, 0, 0, 0]
    assert [stored[("pub#1", s)].won for s in range(4)] == [None, "discard", "discard", "discard"]
    assert [stored[("priv#1", s)].flower_pig for s in range(4)] == [False, False, False, True]
    assert [stored[("priv#1", s)].not_ready for s in range(4)] == [True, False, True, False]
    # ann's rows: the old one, the public hand, the private one (hers: all three).
    own = await store.figure_rows("ann", "ann")
    assert [r.hand_id for r in own] == ["old#1", "priv#1", "pub#1"]
    assert [r.hand_id for r in await store.figure_rows("ann", None)] == [r.hand_id for r in own]
    assert [r.hand_id for r in await store.figure_rows("ann", "bob")] == [r.hand_id for r in own]
    assert [r.hand_id for r in await store.figure_rows("ann", "eve")] == ["old#1", "pub#1"]
    f = figures(own)
    assert f.hands == 3 and f.deal_ins == 3 and f.not_ready == 1 and f.wins == 1
    assert f.points == 4 - 9 + 7 and f.places[0] == 1
