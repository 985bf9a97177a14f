"""The hand-history projection on the embedded log and SQLite: every finished hand once,
through crashes and failed transactions, and a rebuild from the log equal to the live rows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from schemas import events as ev
from schemas.table import decode_event
from services.history.embedded import EmbeddedHistoryStore
from services.history.service import HistoryService, PositionAhead, rebuild
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import read_through
from services.runtime.topics import TABLE_EVENTS, TOPICS
from services.simulate import simulate
from services.table.service import TableService
from tests.service.history_pages import check_pages


async def _played(directory: Path, hands: int) -> EmbeddedLog:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    stop = asyncio.Event()
    table = TableService(log)
    task = asyncio.create_task(table.run(stop))
    await asyncio.wait_for(table.ready.wait(), 30)
    await simulate(log, hands, tables=4, bots=["easy"] * 4)
    stop.set()
    await task
    return log


async def _ended_in_log(log: EmbeddedLog) -> dict[str, ev.HandEnded]:
    out = {}
    for p in range(await log.partition_count(TABLE_EVENTS)):
        async for r in read_through(log, TABLE_EVENTS, p, 0):
            if b'"hand_ended"' in r.value:
                e = decode_event(r.value)
                assert isinstance(e, ev.HandEnded)
                out[e.hand_id] = e
    return out


async def _all_rows(store: EmbeddedHistoryStore) -> list[tuple[str, int, int, int]]:
    snap = await store.snapshot()
    return sorted((r.hand_id, r.seat, r.score, r.placement) for r in snap.rows)


def test_every_finished_hand_has_one_row_per_seat_with_its_scores(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path, 6)
        ended = await _ended_in_log(log)
        store = EmbeddedHistoryStore(tmp_path)
        service = HistoryService(log, store)
        await service.catch_up()
        rows = (await store.snapshot()).rows
        assert len(rows) == 4 * len(ended) == 24
        for row in rows:
            end = ended[row.hand_id]
            assert row.score == end.scores[row.seat]
            assert row.placement == end.placements[row.seat]
            assert row.end == end.end and row.kind == "casual" and row.public
            assert row.ended_ms > 0 and len(row.players) == 4
            assert row.players[row.seat] == row.player
        winners = [r for r in rows if r.best_fan is not None]
        assert winners  # some seat won something in six hands
        assert (await rebuild(log, store)).ok
        await store.close()
        await log.close()

    asyncio.run(go())


def test_a_restart_mid_stream_writes_each_hand_once(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path, 8)
        ended = await _ended_in_log(log)
        # Small batches, and a new service (nothing in memory) after every step: like a
        # kill -9 between transactions, with hands open across the cut.
        steps = 0
        while True:
            store = EmbeddedHistoryStore(tmp_path)
            service = HistoryService(log, store, max_batch=7)
            await store.start()
            service.started = True
            await service.resync()
            read = await service.step()
            await store.close()
            steps += 1
            if not read:
                break
        assert steps > 10
        store = EmbeddedHistoryStore(tmp_path)
        await store.start()
        rows = await _all_rows(store)
        assert len(rows) == 4 * len(ended) and len({(h, s) for h, s, _, _ in rows}) == len(rows)
        assert (await rebuild(log, store)).ok
        await store.close()
        await log.close()

    asyncio.run(go())


class _FlakyStore(EmbeddedHistoryStore):
    """Fails every other transaction: half of them before writing, half after committing."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.calls = 0

    async def apply(self, step):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls % 4 == 1:
            raise ConnectionError("database away before the commit")
        applied = await super().apply(step)
        if self.calls % 4 == 3:
            raise ConnectionError("connection lost after the commit")
        return applied


def test_failed_transactions_are_retried_and_nothing_is_written_twice(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path, 6)
        ended = await _ended_in_log(log)
        store = _FlakyStore(tmp_path)
        service = HistoryService(log, store, max_batch=11, retry_s=0.01, max_retry_s=0.02)
        stop = asyncio.Event()
        task = asyncio.create_task(service.run(stop))
        check = EmbeddedHistoryStore(tmp_path)
        await check.start()
        for _ in range(400):
            if service.ready.is_set() and len(await _all_rows(check)) == 4 * len(ended):
                break
            await asyncio.sleep(0.05)
        stop.set()
        await task
        assert service.failures >= 2
        rows = await _all_rows(check)
        assert len(rows) == 4 * len(ended) == len(set(rows))
        assert (await rebuild(log, check)).ok
        await check.close()
        await log.close()

    asyncio.run(go())


def test_rebuild_finds_a_changed_row(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path, 2)
        store = EmbeddedHistoryStore(tmp_path)
        await HistoryService(log, store).catch_up()
        store.db.execute("UPDATE hands SET score = score + 1 WHERE seat = 0")
        report = await rebuild(log, store)
        assert not report.ok and report.differences["hands"] == 2
        assert "DIFFERENT" in report.summary()
        await store.close()
        await log.close()

    asyncio.run(go())


def test_rows_are_plain_json_for_the_api(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path, 1)
        store = EmbeddedHistoryStore(tmp_path)
        await HistoryService(log, store).catch_up()
        row = (await store.snapshot()).rows[0]
        out = msgspec.json.decode(msgspec.json.encode(row))
        assert {"hand_id", "kind", "players", "score", "placement", "best_fan", "ended_ms"} <= set(
            out
        )
        await store.close()
        await log.close()

    asyncio.run(go())


def test_a_position_beyond_the_end_of_the_log_stops_the_projection(tmp_path: Path) -> None:
    async def go() -> None:
        log = await _played(tmp_path / "old", 1)
        store = EmbeddedHistoryStore(tmp_path / "old")
        await HistoryService(log, store).catch_up()
        await store.close()
        await log.close()
        # A new, empty log with the old store (a new broker with an old database).
        fresh = EmbeddedLog(tmp_path / "new")
        await fresh.start()
        await fresh.create_topics(TOPICS)
        (tmp_path / "new" / "history.sqlite3").write_bytes(
            (tmp_path / "old" / "history.sqlite3").read_bytes()
        )
        service = HistoryService(fresh, EmbeddedHistoryStore(tmp_path / "new"))
        with pytest.raises(PositionAhead):
            await asyncio.wait_for(service.run(asyncio.Event()), 30)
        assert not service.ready.is_set()
        await fresh.close()

    asyncio.run(go())


def test_a_hand_open_too_long_is_given_up_the_same_way_whatever_the_batches() -> None:
    from schemas.table import EventEnvelope, encode
    from services.history.fold import HandsFold
    from services.runtime.log import Record

    def started(table: str, n: int) -> ev.HandStarted:
        return ev.HandStarted(
            table_id=table, hand_id=f"{table}#{n}", seq=1, preset="p", seats=["a", "b", "c", "d"]
        )

    def ended(table: str, n: int) -> ev.HandEnded:
        return ev.HandEnded(
            table_id=table,
            hand_id=f"{table}#{n}",
            seq=2,
            end="wall_exhausted",
            scores=[0, 0, 0, 0],
            placements=[1, 1, 1, 1],
        )

    events = [started("old", 1)] + [
        e for i in range(20) for e in (started(f"t{i}", 1), ended(f"t{i}", 1))
    ]
    events.append(ended("old", 1))  # ends long after its start: given up before that
    records = [
        Record(TABLE_EVENTS, 0, o, e.table_id, encode(EventEnvelope(event=e)))
        for o, e in enumerate(events)
    ]
    whole = HandsFold(0, abandoned_after=10)
    for r in records:
        whole.fold(r)
    assert sorted(h.end.table_id for h in whole.ended) == sorted(f"t{i}" for i in range(20))
    # Cut anywhere and rebuilt from open_from: the same hands, the same open set.
    for cut in range(1, len(records)):
        first = HandsFold(0, abandoned_after=10)
        for r in records[:cut]:
            first.fold(r)
        again = HandsFold(0, position=first.open_from, abandoned_after=10)
        for r in records[first.open_from : cut]:
            again.fold(r)
        again.take_ended()
        for r in records[cut:]:
            again.fold(r)
        assert [h.end.hand_id for h in first.ended + again.ended] == [
            h.end.hand_id for h in whole.ended
        ]


def test_migration_2_keeps_old_rows_and_stores_the_figures_facts(tmp_path: Path) -> None:
    from services.history.embedded import FILE
    from services.history.migrations import SQLITE
    from services.runtime.sqlite import connect, migrate
    from tests.service.history_store_checks import OLD_COLUMNS, check_figures_columns, old_values

    db = connect(tmp_path / FILE)
    assert migrate(db, SQLITE[:1]) == [1]
    values = list(old_values())
    values[8] = json.dumps(values[8])  # players: a JSON list in SQLite
    db.execute(f"INSERT INTO hands ({OLD_COLUMNS}) VALUES ({', '.join('?' * 16)})", values)
    db.close()

    async def go() -> None:
        store = EmbeddedHistoryStore(tmp_path)
        await store.start()
        try:
            await check_figures_columns(store)
        finally:
            await store.close()

    asyncio.run(go())


def test_a_players_hands_by_kind_in_pages_with_their_count(tmp_path: Path) -> None:
    async def go() -> None:
        store = EmbeddedHistoryStore(tmp_path)
        await store.start()
        try:
            await check_pages(store)
        finally:
            await store.close()

    asyncio.run(go())
