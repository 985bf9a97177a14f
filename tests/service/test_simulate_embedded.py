"""``simulate`` through the table service on the embedded log, its bots fed by per-seat
trackers: every decision made from exactly the seat's view, and the same hands played as
when each decision rebuilt the full ``seat_view``."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import types
import uuid
from pathlib import Path

import pytest

from schemas import events as ev
from services import simulate as sim
from services.bots.botview import BotView, from_seat_view
from services.rules import HandState, seat_view
from services.runtime.embedded import EmbeddedLog
from services.runtime.topics import TABLE_EVENTS
from services.table.service import TableService
from tests.service.logs import assert_exactly_once, hand_logs, records, started

LINEUP = ("easy", "normal", "strong", "easy")


def old_bot_view(run: sim._TableRun, state: HandState, seat: int) -> BotView:
    """How ``simulate`` fed its bots before the trackers: a full seat view per decision."""
    return from_seat_view(seat_view(state, seat))


async def play(directory: Path, hands: int, tables: int, *, deterministic: bool) -> None:
    """``hands`` hands between ``LINEUP`` through a table service; with ``deterministic`` the
    deals, command ids and clock are fixed, so two runs can be compared byte for byte."""
    log = EmbeddedLog(directory)
    counter = itertools.count()
    service = (
        TableService(
            log,
            seed_source=lambda n: hashlib.sha256(b"deal %d" % next(counter)).digest()[:n],
            now_ms=lambda: 1_800_000_000_000,
        )
        if deterministic
        else TableService(log)
    )
    stop = asyncio.Event()
    async with started(log):
        task = asyncio.create_task(service.run(stop))
        try:
            await asyncio.wait_for(service.ready.wait(), 10)
            result = await sim.simulate(log, hands, tables, bots=LINEUP, deadline_s=300)
        finally:
            stop.set()
            await task
        assert result.hands == hands and result.rejections == 0
        hand = await hand_logs(log)
        assert len(hand) == hands
        assert_exactly_once(hand)
        assert all(isinstance(events[-1], ev.HandEnded) for events in hand.values())


def test_every_decision_is_made_from_exactly_the_seats_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[tuple[str, int]] = []
    tracked = sim.bot_view

    def checking(run: sim._TableRun, state: HandState, seat: int) -> BotView:
        view = tracked(run, state, seat)
        expected = old_bot_view(run, state, seat)
        if state.phase != "play":
            expected.legal = []  # not given in the opening: no bot reads it there
        assert view == expected, (run.table_id, state.decision_seq, seat)
        checked.append((state.hand_id, seat))
        return view

    monkeypatch.setattr(sim, "bot_view", checking)
    asyncio.run(play(tmp_path, hands=24, tables=6, deterministic=False))
    assert len(checked) > 24 * 40 and len({h for h, _ in checked}) == 24


def test_the_trackers_play_the_same_hands_as_full_seat_views(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fixed deals (and ids, and clock): the log of ``table.events`` is the same, record for
    record, whichever way the bots are fed."""

    async def log_of(name: str) -> list[tuple[str, int, bytes]]:
        ids = (uuid.UUID(int=i) for i in itertools.count(1))
        monkeypatch.setattr(sim, "uuid", types.SimpleNamespace(uuid4=lambda: next(ids)))
        await play(tmp_path / name, hands=6, tables=1, deterministic=True)
        async with started(EmbeddedLog(tmp_path / name)) as log:
            return [(r.key, r.offset, r.value) for r in await records(log, TABLE_EVENTS)]

    tracked = asyncio.run(log_of("tracked"))
    monkeypatch.setattr(sim, "bot_view", old_bot_view)
    rebuilt = asyncio.run(log_of("rebuilt"))
    assert len(tracked) > 6 * 100
    assert tracked == rebuilt
