"""The lobby projector on a real PostgreSQL database: a ``lobby.events`` record it cannot
read goes to ``lobby.events.dlq`` with its reason, the events after it are projected, and
the position moves past it (issue 17: before, the projector raised on it at every start).

The projector's schema is fixed (``lobby``), so the test gets a database of its own on the
shared server; its log is an embedded one in a temporary folder, so that nothing poisons the
shared broker's ``lobby.events``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import msgspec
import pytest

from schemas import lobby as lb
from schemas.table import DeadLetter
from services.matchmaking.projection import LobbyProjection
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import LOBBY_DLQ, LOBBY_EVENTS
from tests.service.logs import records, started

pytestmark = [pytest.mark.integration]


def _with_database(dsn: str, database: str) -> str:
    head, _, _ = dsn.rpartition("/")
    return f"{head}/{database}"


@pytest.fixture
def own_dsn(postgres_dsn: str) -> Iterator[str]:
    name = f"lobby_poison_{uuid.uuid4().hex[:8]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    yield _with_database(postgres_dsn.split("?")[0], name)
    asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _event(event: lb.Event) -> Outgoing:
    return Outgoing(LOBBY_EVENTS, "k", msgspec.json.encode(lb.LobbyEnvelope(event=event)), 0)


def test_an_unreadable_lobby_event_is_set_aside_and_the_next_ones_projected(
    tmp_path: Path, own_dsn: str
) -> None:
    opened = lb.TableOpened(table_id="t-1", creator="p-1", options=lb.TableOptions())
    later = lb.TableOpened(table_id="t-2", creator="p-2", options=lb.TableOptions())
    poison = b'{"event": {"type": "seat_taken", "table_id": "t-1"}, "v": 1}'

    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await log.produce([_event(opened), Outgoing(LOBBY_EVENTS, "k", poison, 0)])
            await log.produce([_event(later)])
            projection = LobbyProjection(log, own_dsn)
            stop = asyncio.Event()
            task = asyncio.create_task(projection.run(stop))
            async with asyncio.timeout(30):
                while projection.position < 3:
                    if task.done():
                        task.result()
                    await asyncio.sleep(0.05)
                listed = await projection.public_tables()
            stop.set()
            await task
            letters = [
                msgspec.json.decode(r.value, type=DeadLetter) for r in await records(log, LOBBY_DLQ)
            ]
        assert [t["table_id"] for t in listed] == ["t-1", "t-2"]
        assert [(x.source_topic, x.source_offset) for x in letters] == [(LOBBY_EVENTS, 1)]
        assert "player" in letters[0].reason

    asyncio.run(go())
