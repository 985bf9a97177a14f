"""The embedded event log: Kafka's topic/partition/offset model in one SQLite file (WAL).

One process owns the file. A processor's transaction is one SQLite transaction holding the
records it appends and the group position it moves, so a crash at any moment leaves either
both or neither. ``synchronous=FULL``: a committed transaction survives a power cut too.
The file is opened as every SQLite file of the data folder is (``services.runtime.sqlite``:
its pragmas and that durability); its tables are its own (``SCHEMA``, not numbered
migrations). Its statements run on the event loop, unlike the stores': a processor's
transaction stays open while the service decides a poll's commands, and one thread hop per
appended record would cost more than the statements themselves. A transaction's records are
written together when it commits (``_Appends``): one read of each partition's end, one
``executemany`` of the rows, one move of each end, not three statements a record.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections import defaultdict
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

from services.runtime.log import (
    Assignment,
    Outgoing,
    Record,
    TopicSpec,
    partition_for,
)
from services.runtime.sqlite import connect, write

logger = logging.getLogger("mahjong.embedded")

SCHEMA = """
CREATE TABLE IF NOT EXISTS topics(
  name TEXT PRIMARY KEY, partitions INTEGER NOT NULL, retention_ms INTEGER NOT NULL,
  compacted INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS records(
  topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  key TEXT NOT NULL, value BLOB NOT NULL,
  PRIMARY KEY(topic, partition, offset)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_by_key ON records(topic, partition, key);
CREATE TABLE IF NOT EXISTS ends(
  topic TEXT NOT NULL, partition INTEGER NOT NULL, next_offset INTEGER NOT NULL,
  PRIMARY KEY(topic, partition)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_offsets(
  grp TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL, PRIMARY KEY(grp, topic, partition)) WITHOUT ROWID;
"""


class EmbeddedLog:
    """An ``EventLog`` on SQLite in ``directory``."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / "log.sqlite3"
        self._db: sqlite3.Connection | None = None
        self._specs: dict[str, TopicSpec] = {}
        self._changed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        db = connect(self.path)
        db.executescript(SCHEMA)
        if "ts" not in {row[1] for row in db.execute("PRAGMA table_info(records)")}:
            # Append times came later: records written before them read as 0 ("not known").
            db.execute("ALTER TABLE records ADD COLUMN ts INTEGER NOT NULL DEFAULT 0")
        self._db = db
        for name, partitions, retention, compacted in db.execute("SELECT * FROM topics"):
            self._specs[name] = TopicSpec(name, partitions, retention, bool(compacted))

    async def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the embedded log is not started")
        return self._db

    # --- topics -----------------------------------------------------------------------------

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        with self._write():
            for spec in specs:
                self.db.execute(
                    "INSERT OR IGNORE INTO topics VALUES (?, ?, ?, ?)",
                    (spec.name, spec.partitions, spec.retention_ms, int(spec.compacted)),
                )
                self._specs.setdefault(spec.name, spec)

    async def partition_count(self, topic: str) -> int:
        return self._spec(topic).partitions

    def _spec(self, topic: str) -> TopicSpec:
        spec = self._specs.get(topic)
        if spec is None:
            raise KeyError(f"unknown topic {topic!r}; run `mahjong-planet topics` first")
        return spec

    # --- writing ----------------------------------------------------------------------------

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception."""
        return write(self.db)

    def _batch(self) -> _Appends:
        """A write transaction's appends, written together when it commits (``flush``)."""
        return _Appends(self)

    def _notify(self, topics: set[str]) -> None:
        for topic in topics:
            event = self._changed[topic]
            event.set()
            self._changed[topic] = asyncio.Event()

    async def produce(self, records: Sequence[Outgoing]) -> None:
        with self._write():
            appends = self._batch()
            for r in records:
                appends.add(r)
            appends.flush()
        self._notify({r.topic for r in records})

    # --- reading ----------------------------------------------------------------------------

    async def read(self, topic: str, partition: int, start: int, limit: int) -> list[Record]:
        rows = self.db.execute(
            "SELECT offset, key, value, ts FROM records WHERE topic=? AND partition=? "
            "AND offset>=? ORDER BY offset LIMIT ?",
            (topic, partition, start, limit),
        ).fetchall()
        return [Record(topic, partition, o, k, bytes(v), ts) for o, k, v, ts in rows]

    async def end_offset(self, topic: str, partition: int) -> int:
        row = self.db.execute(
            "SELECT next_offset FROM ends WHERE topic=? AND partition=?", (topic, partition)
        ).fetchone()
        return int(row[0]) if row else 0

    def _ends(self, topics: Sequence[str]) -> dict[tuple[str, int], int]:
        """Every partition end of ``topics`` in one query: a poll reads only the partitions
        that moved (most are idle), not one empty query a partition."""
        marks = ", ".join("?" * len(topics))
        rows = self.db.execute(
            f"SELECT topic, partition, next_offset FROM ends WHERE topic IN ({marks})", topics
        ).fetchall()
        return {(t, p): end for t, p, end in rows}

    async def wait_for_change(self, topic: str, timeout_s: float) -> None:
        """Sleep until something is appended to ``topic`` (or the timeout passes)."""
        # asyncio.wait, not wait_for: 3.11's wait_for can hang a task cancelled while the
        # inner wait completes, which is exactly what stopping a service does.
        waiter = asyncio.ensure_future(self._changed[topic].wait())
        try:
            await asyncio.wait({waiter}, timeout=timeout_s)
        finally:
            waiter.cancel()

    async def group_positions(self, group: str, topic: str) -> dict[int, int]:
        rows = self.db.execute(
            "SELECT partition, next_offset FROM group_offsets WHERE grp=? AND topic=?",
            (group, topic),
        ).fetchall()
        return {int(p): int(o) for p, o in rows}

    def committed(self, group: str, topic: str, partition: int) -> int:
        row = self.db.execute(
            "SELECT next_offset FROM group_offsets WHERE grp=? AND topic=? AND partition=?",
            (group, topic, partition),
        ).fetchone()
        return int(row[0]) if row else 0

    def processor(
        self, group: str, topic: str, on_assign: Assignment, on_revoke: Assignment
    ) -> EmbeddedProcessor:
        return EmbeddedProcessor(self, group, topic, on_assign, on_revoke)

    def follower(self, topics: Sequence[str]) -> EmbeddedFollower:
        return EmbeddedFollower(self, list(topics))


class _Appends:
    """The records one write transaction appends, written in a few statements at its end.

    Each (topic, partition) end is read once, when the transaction first appends there:
    the transaction holds the file's write lock (``BEGIN IMMEDIATE``), so no other
    connection, in this process or another sharing the file, can move it meanwhile, and
    nothing is kept from one transaction to the next. The offsets are handed out as the
    records come (``add``); ``flush`` inserts them all, deletes what a compacted topic's
    newer record of the same key replaces, and moves each end once. Until then the records
    are invisible, even to this connection: the same as before its commit to any other
    reader.
    """

    __slots__ = ("ends", "log", "newest", "rows")

    def __init__(self, log: EmbeddedLog) -> None:
        self.log = log
        self.ends: dict[tuple[str, int], int] = {}
        self.rows: list[tuple[str, int, int, str, bytes]] = []
        self.newest: dict[tuple[str, int, str], int] = {}
        """Compacted topics: (topic, partition, key) → its newest row in ``rows``."""

    def add(self, record: Outgoing) -> int:
        """Take ``record`` into the transaction; the offset it will have."""
        spec = self.log._spec(record.topic)
        partition = (
            record.partition
            if record.partition is not None
            else partition_for(record.key, spec.partitions)
        )
        if not 0 <= partition < spec.partitions:
            raise ValueError(f"{record.topic} has no partition {partition}")
        where = (record.topic, partition)
        offset = self.ends.get(where)
        if offset is None:
            row = self.log.db.execute(
                "SELECT next_offset FROM ends WHERE topic=? AND partition=?", where
            ).fetchone()
            offset = row[0] if row else 0
        self.ends[where] = offset + 1
        if spec.compacted:
            self.newest[(record.topic, partition, record.key)] = len(self.rows)
        self.rows.append((record.topic, partition, offset, record.key, record.value))
        return offset

    def flush(self) -> None:
        """Write what was added (inside the transaction, before its commit)."""
        if not self.rows:
            return
        db = self.log.db
        rows = self.rows
        if self.newest:
            # A compacted topic keeps only the newest record of a key: older rows go, those
            # already committed and those added earlier in this transaction alike.
            db.executemany(
                "DELETE FROM records WHERE topic=? AND partition=? AND key=?", self.newest
            )
            kept = set(self.newest.values())
            rows = [
                row
                for i, row in enumerate(rows)
                if i in kept or not self.log._specs[row[0]].compacted
            ]
        ts = time.time_ns() // 10**6
        db.executemany(
            "INSERT INTO records (topic, partition, offset, key, value, ts) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(*row, ts) for row in rows],
        )
        db.executemany(
            "INSERT INTO ends VALUES (?, ?, ?) ON CONFLICT(topic, partition) "
            "DO UPDATE SET next_offset=excluded.next_offset",
            [(topic, partition, end) for (topic, partition), end in self.ends.items()],
        )


class EmbeddedFollower:
    """Reads what is appended to some topics after ``start``."""

    def __init__(self, log: EmbeddedLog, topics: list[str]) -> None:
        self.log, self.topics = log, topics
        self.positions: dict[tuple[str, int], int] = {}

    async def start(self) -> None:
        for topic in self.topics:
            for p in range(await self.log.partition_count(topic)):
                self.positions[(topic, p)] = await self.log.end_offset(topic, p)

    async def _read(self) -> list[Record]:
        out: list[Record] = []
        ends = self.log._ends(self.topics)
        for (topic, p), position in self.positions.items():
            if ends.get((topic, p), 0) <= position:
                continue
            records = await self.log.read(topic, p, position, 5000)
            if records:
                self.positions[(topic, p)] = records[-1].offset + 1
                out.extend(records)
        return out

    async def poll(self, timeout_s: float) -> list[Record]:
        records = await self._read()
        if not records:
            waits = {asyncio.ensure_future(self.log._changed[t].wait()) for t in self.topics}
            _, pending = await asyncio.wait(
                waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending:
                task.cancel()
            records = await self._read()
        return records

    async def stop(self) -> None:
        self.positions.clear()


class EmbeddedProcessor:
    """The only member of its group: it is assigned every partition of its topic."""

    def __init__(
        self,
        log: EmbeddedLog,
        group: str,
        topic: str,
        on_assign: Assignment,
        on_revoke: Assignment,
    ) -> None:
        self.log, self.group, self.topic = log, group, topic
        self.on_assign, self.on_revoke = on_assign, on_revoke
        self._positions: dict[int, int] = {}
        self._outer: _OneCommit | None = None

    concurrent_partitions = False  # one SQLite connection: one transaction at a time

    def one_commit(self) -> _OneCommit:
        """The partitions' transactions made inside this context commit together, once, at
        its end (one fsync for a poll, not one a partition). See ``_OneCommit``."""
        return _OneCommit(self)

    async def start(self) -> None:
        partitions = await self.log.partition_count(self.topic)
        for p in range(partitions):
            self._positions[p] = self.log.committed(self.group, self.topic, p)
        await self.on_assign(set(self._positions))

    async def stop(self) -> None:
        assigned = set(self._positions)
        self._positions.clear()
        if assigned:
            await self.on_revoke(assigned)

    def assignment(self) -> set[int]:
        return set(self._positions)

    async def poll(self, max_records: int, timeout_s: float) -> dict[int, list[Record]]:
        batch = await self._read(max_records)
        if not batch:
            await self.log.wait_for_change(self.topic, timeout_s)
            batch = await self._read(max_records)
        return batch

    async def _read(self, max_records: int) -> dict[int, list[Record]]:
        out: dict[int, list[Record]] = {}
        ends = self.log._ends((self.topic,))
        for p, position in self._positions.items():
            if ends.get((self.topic, p), 0) <= position:
                continue
            records = await self.log.read(self.topic, p, position, max_records)
            if records:
                out[p] = records
                self._positions[p] = records[-1].offset + 1
        return out

    async def rewind(self, partition: int) -> None:
        # The only member: the partition comes straight back, rebuilt from the log.
        await self.on_revoke({partition})
        self._positions[partition] = self.log.committed(self.group, self.topic, partition)
        await self.on_assign({partition})

    def seek(self, partition: int, offset: int) -> None:
        self._positions[partition] = offset

    def transaction(self, partition: int, next_offset: int) -> _EmbeddedTransaction:
        return _EmbeddedTransaction(self, partition, next_offset)


class _OneCommit:
    """One SQLite transaction around several partitions' transactions of one processor.

    For a service whose poll's work does not wait on anything (the table service decides a
    poll's commands without a real ``await``): nothing else can use the connection while
    it is open. Each partition's transaction inside is a savepoint: a failure rolls back that
    partition's records and position only, and ``transact`` gives that partition back as
    ever. The records and positions of all commit at the end, atomically and durably, and
    only then are waiters woken. Should that commit fail, every partition that had written
    inside is given back (``rewind``: rebuilt from the settled log), as ``transact`` does
    for a failed transaction of its own; if the work itself raised, the same, and it is
    raised on.
    """

    def __init__(self, processor: EmbeddedProcessor) -> None:
        self.p = processor
        self.topics: set[str] = set()
        self.partitions: list[int] = []
        self._txn: AbstractContextManager[sqlite3.Connection] | None = None

    async def __aenter__(self) -> _OneCommit:
        if self.p._outer is not None:
            raise RuntimeError("one_commit is already open on this processor")
        txn = self.p.log._write()
        txn.__enter__()
        self._txn, self.p._outer = txn, self
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._txn is not None
        self.p._outer = None
        db = self.p.log.db
        if kind is None and not db.in_transaction:
            # SQLite rolled it all back by itself (a full disk, say, during one partition's
            # work): the partitions that ended well before that were not committed either.
            lost = sqlite3.OperationalError("the transaction was rolled back")
            self._txn.__exit__(type(lost), lost, None)  # nothing to roll back: just close
            logger.error("the transaction of %d partitions was rolled back", len(self))
            await self._give_back()
            return
        try:
            self._txn.__exit__(kind, exc, tb)  # COMMIT, or ROLLBACK when the work raised
        except Exception:
            if db.in_transaction:
                db.execute("ROLLBACK")
            logger.exception("the commit of %d partitions failed; giving them back", len(self))
            await self._give_back()
            return
        if kind is not None:
            await self._give_back()
            return
        self.p.log._notify(self.topics)

    def __len__(self) -> int:
        return len(self.partitions)

    async def _give_back(self) -> None:
        for partition in self.partitions:
            if partition in self.p.assignment():
                await self.p.rewind(partition)


class _EmbeddedTransaction:
    def __init__(self, processor: EmbeddedProcessor, partition: int, next_offset: int) -> None:
        self.p = processor
        self.partition = partition
        self.next_offset = next_offset
        self.topics: set[str] = set()
        self._txn: AbstractContextManager[sqlite3.Connection] | None = None
        self._outer: _OneCommit | None = None
        self._appends = processor.log._batch()

    async def __aenter__(self) -> _EmbeddedTransaction:
        outer = self.p._outer
        if outer is not None:
            if not self.p.log.db.in_transaction:
                # Rolled back under the savepoints before this one: a savepoint now would
                # be a transaction of its own. Fail this partition; the commit gives back
                # the others.
                raise sqlite3.OperationalError("the shared transaction was rolled back")
            self._outer = outer
            self.p.log.db.execute(f"SAVEPOINT p{self.partition}")
            return self
        txn = self.p.log._write()
        txn.__enter__()
        self._txn = txn
        return self

    async def send(self, record: Outgoing) -> int:
        self.topics.add(record.topic)
        return self._appends.add(record)

    def send_soon(self, record: Outgoing) -> None:
        self.topics.add(record.topic)
        self._appends.add(record)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._outer is not None:
            await self._exit_savepoint(self._outer, kind is None)
            return
        assert self._txn is not None
        if kind is None:
            try:
                self._write_position()
            except BaseException as failure:
                # Rolled back, and raised from here as from the body.
                self._txn.__exit__(type(failure), failure, failure.__traceback__)
                raise
        self._txn.__exit__(kind, exc, tb)
        if kind is None:
            self.p.log._notify(self.topics)

    def _write_position(self) -> None:
        if not self.p.log.db.in_transaction:
            # SQLite rolled the transaction back by itself during the work: writing now
            # would commit each statement on its own.
            raise sqlite3.OperationalError("the transaction was rolled back")
        self._appends.flush()
        self.p.log.db.execute(
            "INSERT INTO group_offsets VALUES (?, ?, ?, ?) ON CONFLICT(grp, topic, "
            "partition) DO UPDATE SET next_offset=excluded.next_offset",
            (self.p.group, self.p.topic, self.partition, self.next_offset),
        )

    async def _exit_savepoint(self, outer: _OneCommit, ok: bool) -> None:
        db = self.p.log.db
        name = f"p{self.partition}"
        if ok:
            try:
                self._write_position()
            except BaseException:
                if db.in_transaction:
                    db.execute(f"ROLLBACK TO {name}")
                    db.execute(f"RELEASE {name}")
                raise
            db.execute(f"RELEASE {name}")
            outer.partitions.append(self.partition)
            outer.topics |= self.topics
        elif db.in_transaction:
            db.execute(f"ROLLBACK TO {name}")
            db.execute(f"RELEASE {name}")
