"""The embedded log's appends (``services.runtime.embedded``): contiguous offsets per
partition, compaction by key, one atomic transaction with the group's position, wake-ups on
commit, and several connections (processes) sharing one file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path

import pytest

from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing, Record, TopicSpec, partition_for

PLAIN = TopicSpec("plain", 3, retention_ms=-1)
HEADS = TopicSpec("heads", 2, compacted=True)
COMMANDS = TopicSpec("commands", 2, retention_ms=-1)


@asynccontextmanager
async def opened(directory: Path) -> AsyncIterator[EmbeddedLog]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics([PLAIN, HEADS, COMMANDS])
    try:
        yield log
    finally:
        await log.close()


async def everything(log: EmbeddedLog, spec: TopicSpec) -> dict[int, list[Record]]:
    return {p: await log.read(spec.name, p, 0, 10_000) for p in range(spec.partitions)}


def offsets(records: list[Record]) -> list[int]:
    return [r.offset for r in records]


def test_offsets_are_contiguous_per_partition_within_and_across_produces(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log:
            await log.produce([Outgoing("plain", f"k{i}", b"%d" % i) for i in range(10)])
            await log.produce([Outgoing("plain", f"k{i}", b"again %d" % i) for i in range(10)])
            await log.produce([Outgoing("plain", "x", b"p2", 2), Outgoing("plain", "y", b"p2", 2)])
            rows = await everything(log, PLAIN)
            for p, records in rows.items():
                assert offsets(records) == list(range(len(records)))
                assert await log.end_offset("plain", p) == len(records)
            assert sum(map(len, rows.values())) == 22
            for i in range(10):
                p = partition_for(f"k{i}", 3)
                values = [r.value for r in rows[p] if r.key == f"k{i}"]
                assert values == [b"%d" % i, b"again %d" % i]  # in the order produced
            assert [r.value for r in rows[2][-2:]] == [b"p2", b"p2"]
            assert all(r.timestamp_ms > 0 for rs in rows.values() for r in rs)

    asyncio.run(go())


def test_a_compacted_topic_keeps_the_newest_record_of_each_key(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log:
            await log.produce([Outgoing("heads", "a", b"a1", 0), Outgoing("heads", "b", b"b1", 0)])
            # Twice in one transaction: only the second survives, both take an offset.
            await log.produce([Outgoing("heads", "a", b"a2", 0), Outgoing("heads", "a", b"a3", 0)])
            await log.produce([Outgoing("heads", "a", b"other partition", 1)])
            rows = await everything(log, HEADS)
            assert [(r.offset, r.key, r.value) for r in rows[0]] == [
                (1, "b", b"b1"),
                (3, "a", b"a3"),
            ]
            assert await log.end_offset("heads", 0) == 4
            assert [(r.offset, r.value) for r in rows[1]] == [(0, b"other partition")]

    asyncio.run(go())


def test_a_processors_transaction_is_its_records_and_position_or_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log:
            await log.produce(
                [Outgoing("commands", "t", b"c0", 0), Outgoing("commands", "t", b"c1", 0)]
            )

            async def nothing(_: set[int]) -> None:
                pass

            processor = log.processor("g", "commands", nothing, nothing)
            await processor.start()
            batch = await processor.poll(10, 0.1)
            assert offsets(batch[0]) == [0, 1]
            with pytest.raises(RuntimeError):
                async with processor.transaction(0, 1) as txn:
                    assert await txn.send(Outgoing("plain", "t", b"lost", 1)) == 0
                    txn.send_soon(Outgoing("heads", "t", b"lost", 1))
                    raise RuntimeError("the service failed mid-batch")
            assert await log.read("plain", 1, 0, 10) == []
            assert await log.read("heads", 1, 0, 10) == []
            assert await log.end_offset("plain", 1) == 0
            assert log.committed("g", "commands", 0) == 0

            async with processor.transaction(0, 2) as txn:
                assert await txn.send(Outgoing("plain", "t", b"e0", 1)) == 0
                txn.send_soon(Outgoing("plain", "t", b"e1", 1))
                txn.send_soon(Outgoing("heads", "t", b"h0", 1))
                txn.send_soon(Outgoing("heads", "t", b"h1", 1))
                assert await txn.send(Outgoing("plain", "t", b"e2", 1)) == 2
            assert [r.value for r in await log.read("plain", 1, 0, 10)] == [b"e0", b"e1", b"e2"]
            assert [(r.offset, r.value) for r in await log.read("heads", 1, 0, 10)] == [(1, b"h1")]
            assert log.committed("g", "commands", 0) == 2
            assert await log.group_positions("g", "commands") == {0: 2}
            await processor.stop()

    asyncio.run(go())


def test_a_commit_wakes_the_waiters_of_its_topics(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log:
            follower = log.follower(["plain"])
            await follower.start()
            poll = asyncio.ensure_future(follower.poll(30))
            await asyncio.sleep(0.01)
            assert not poll.done()
            await log.produce([Outgoing("plain", "k", b"v", 0)])
            records = await asyncio.wait_for(poll, 5)
            assert [(r.partition, r.value) for r in records] == [(0, b"v")]

    asyncio.run(go())


def test_connections_sharing_the_file_interleave_without_gaps_or_overlaps(tmp_path: Path) -> None:
    """Another process may append to the same file (a table service of its own, the analysis
    service, a second simulate): each transaction reads the partition's end afresh."""

    async def go() -> None:
        async with opened(tmp_path) as one, opened(tmp_path) as two:
            for i in range(20):
                writer = one if i % 3 else two
                await writer.produce(
                    [Outgoing("plain", "k", b"%d.%d" % (i, j), 0) for j in range(i % 4 + 1)]
                    + [Outgoing("heads", "h", b"%d" % i, 0)]
                )
            for log in (one, two):
                records = await log.read("plain", 0, 0, 1000)
                assert offsets(records) == list(range(50))
                heads = await log.read("heads", 0, 0, 1000)
                assert [(r.offset, r.value) for r in heads] == [(19, b"19")]

    asyncio.run(go())


def test_a_failure_while_writing_the_batch_rolls_the_transaction_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records are written at the end of the transaction: a failure there (the disk, say)
    takes back those already written, and the group's position stays."""
    from services.runtime import embedded

    written = embedded._Appends.flush

    def failing(self: embedded._Appends) -> None:
        written(self)
        raise OSError("disk full")

    async def go() -> None:
        async with opened(tmp_path) as log:

            async def nothing(_: set[int]) -> None:
                pass

            processor = log.processor("g", "commands", nothing, nothing)
            await processor.start()
            monkeypatch.setattr(embedded._Appends, "flush", failing)
            with pytest.raises(OSError):
                async with processor.transaction(0, 5) as txn:
                    txn.send_soon(Outgoing("plain", "t", b"lost", 0))
            with pytest.raises(OSError):
                await log.produce([Outgoing("plain", "t", b"lost too", 0)])
            monkeypatch.undo()
            assert await log.read("plain", 0, 0, 10) == []
            assert await log.end_offset("plain", 0) == 0
            assert log.committed("g", "commands", 0) == 0
            assert not log.db.in_transaction
            async with processor.transaction(0, 5) as txn:
                assert await txn.send(Outgoing("plain", "t", b"kept", 0)) == 0
            assert log.committed("g", "commands", 0) == 5
            await processor.stop()

    asyncio.run(go())


class Assignments:
    """A processor's on_assign/on_revoke, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[int]]] = []

    async def assign(self, partitions: set[int]) -> None:
        self.calls.append(("assign", set(partitions)))

    async def revoke(self, partitions: set[int]) -> None:
        self.calls.append(("revoke", set(partitions)))


def test_one_commit_holds_several_partitions_transactions_until_its_end(tmp_path: Path) -> None:
    """The table service's poll: each partition's transaction a savepoint (a failing one
    rolls back alone), all committed together at the end, and only then visible and woken."""

    async def go() -> None:
        async with opened(tmp_path) as log, opened(tmp_path) as other:
            seen = Assignments()
            processor = log.processor("g", "commands", seen.assign, seen.revoke)
            await processor.start()
            follower = log.follower(["plain"])
            await follower.start()
            waiting = asyncio.ensure_future(log.wait_for_change("plain", 30))
            async with processor.one_commit():
                async with processor.transaction(0, 3) as txn:
                    assert await txn.send(Outgoing("plain", "a", b"a0", 0)) == 0
                    txn.send_soon(Outgoing("heads", "a", b"head a", 0))
                with pytest.raises(RuntimeError):
                    async with processor.transaction(1, 7) as txn:
                        assert await txn.send(Outgoing("plain", "b", b"lost", 0)) == 1
                        raise RuntimeError("this partition's work failed")
                async with processor.transaction(1, 8) as txn:
                    # The failed one took nothing: its offset is handed out again.
                    assert await txn.send(Outgoing("plain", "b", b"b0", 0)) == 1
                    txn.send_soon(Outgoing("heads", "a", b"newer head a", 0))
                await asyncio.sleep(0)
                assert not waiting.done()
                assert await other.read("plain", 0, 0, 10) == []  # not committed yet
            await asyncio.wait_for(waiting, 5)
            for reader in (log, other):
                rows = await reader.read("plain", 0, 0, 10)
                assert [(r.offset, r.value) for r in rows] == [(0, b"a0"), (1, b"b0")]
                heads = await reader.read("heads", 0, 0, 10)
                assert [(r.offset, r.value) for r in heads] == [(1, b"newer head a")]
                assert await reader.group_positions("g", "commands") == {0: 3, 1: 8}
            assert seen.calls == [("assign", {0, 1})]  # nothing given back
            await processor.stop()

    asyncio.run(go())


def test_one_commit_that_fails_takes_everything_back_and_gives_the_partitions_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the partitions wrote inside was not committed, though each of their transactions
    ended well: those partitions are rebuilt from the settled log (``rewind``)."""
    from services.runtime import embedded

    async def go() -> None:
        async with opened(tmp_path) as log:
            seen = Assignments()
            processor = log.processor("g", "commands", seen.assign, seen.revoke)
            await processor.start()
            real_write = embedded.EmbeddedLog._write

            def commit_fails(self: EmbeddedLog) -> AbstractContextManager[object]:
                inner = real_write(self)

                class Failing:
                    def __enter__(self) -> object:
                        return inner.__enter__()

                    def __exit__(self, kind: object, exc: object, tb: object) -> None:
                        if kind is None:
                            inner.__exit__(OSError, OSError("disk gone"), None)
                            raise OSError("disk gone")
                        inner.__exit__(kind, exc, tb)  # type: ignore[arg-type]

                return Failing()

            monkeypatch.setattr(embedded.EmbeddedLog, "_write", commit_fails)
            async with processor.one_commit():
                for p in (0, 1):
                    async with processor.transaction(p, 4) as txn:
                        txn.send_soon(Outgoing("plain", "k", b"lost", p))
            monkeypatch.undo()
            for p in (0, 1):
                assert await log.read("plain", p, 0, 10) == []
                assert log.committed("g", "commands", p) == 0
            assert not log.db.in_transaction
            assert seen.calls[1:] == [
                ("revoke", {0}),
                ("assign", {0}),
                ("revoke", {1}),
                ("assign", {1}),
            ]

            with pytest.raises(ValueError):
                async with processor.one_commit():
                    async with processor.transaction(0, 4) as txn:
                        txn.send_soon(Outgoing("plain", "k", b"lost too", 0))
                    raise ValueError("the service itself failed")
            assert await log.read("plain", 0, 0, 10) == []
            assert seen.calls[-2:] == [("revoke", {0}), ("assign", {0})]
            async with processor.one_commit(), processor.transaction(0, 4) as txn:
                assert await txn.send(Outgoing("plain", "k", b"kept", 0)) == 0
            assert [r.value for r in await log.read("plain", 0, 0, 10)] == [b"kept"]
            await processor.stop()

    asyncio.run(go())


def test_one_commit_rolled_back_by_sqlite_itself_commits_nothing_after(tmp_path: Path) -> None:
    """SQLite may roll a whole transaction back on its own (a full disk, I/O errors): the
    partitions that ended well before are given back, and no later partition's savepoint
    becomes a transaction (and a commit) of its own."""

    async def go() -> None:
        async with opened(tmp_path) as log:
            seen = Assignments()
            processor = log.processor("g", "commands", seen.assign, seen.revoke)
            await processor.start()
            async with processor.one_commit():
                async with processor.transaction(0, 4) as txn:
                    txn.send_soon(Outgoing("plain", "k", b"lost", 0))
                with pytest.raises(Exception):  # noqa: B017 - whatever SQLite raised
                    async with processor.transaction(1, 4) as txn:
                        txn.send_soon(Outgoing("plain", "k", b"lost", 1))
                        log.db.execute("ROLLBACK")  # as SQLite does on SQLITE_FULL
                with pytest.raises(Exception):  # noqa: B017
                    async with processor.transaction(2, 4) as txn:
                        txn.send_soon(Outgoing("plain", "k", b"never", 2))
            assert not log.db.in_transaction
            for p in range(3):
                assert await log.read("plain", p, 0, 10) == []
                assert log.committed("g", "commands", p) == 0
            assert ("revoke", {0}) in seen.calls  # it had ended well: given back
            await processor.stop()

    asyncio.run(go())
