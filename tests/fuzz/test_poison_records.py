"""Records no decoder can read, on the topics the services consume, are set aside and the
services go on: the table service sends them to ``table.commands.dlq``, matchmaking answers
``malformed``, and the next command or request on the same partition is served.

Found by the decoder fuzzer: JSON nested a few thousand levels deep made msgspec raise
``RecursionError`` rather than ``DecodeError``. The services catch ``DecodeError`` only, so
such a record failed its transaction, was read again after recovery, failed again, and so
on for ever (about 5,000 failed transactions a second, each logged with its traceback),
while every other command of its partition waited. The decoders in ``schemas/`` now turn
it into a ``DecodeError``; these tests hold the services to it.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from schemas import lobby as lb
from schemas.table import CommandEnvelope, StartHand, encode
from services.matchmaking.service import MatchmakingService
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import MATCH_REQUESTS, TABLE_COMMANDS
from services.table.service import TableService
from tests.service.lobby_client import answer, refusals, send
from tests.service.logs import dead_letters, hand_logs, started

DEEP = b"[" * 5_000 + b"]" * 5_000
POISON = [
    b'{"x": ' + DEEP + b', "command": {"type": "pass", "seat": 0, "table_id": "t"}, "v": 1}',
    b'{"command": {"type": "start_hand", "table_id": "t", "players": ' + DEEP + b"}}",
    DEEP,
    b'{"request": {"type": "leave_queue", "player": "p", "request_id": "r"}, "z": ' + DEEP + b"}",
]


def log_in(directory: Path) -> contextlib.AbstractAsyncContextManager[EmbeddedLog]:
    return started(EmbeddedLog(directory))


async def _wait(check, limit_s: float = 15) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(limit_s / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not in time")


def test_the_table_service_sets_unreadable_commands_aside_and_plays_on(tmp_path: Path) -> None:
    async def go() -> None:
        async with log_in(tmp_path) as log:
            service = TableService(log)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            await log.produce([Outgoing(TABLE_COMMANDS, "t", raw) for raw in POISON])
            start = StartHand(table_id="t", players=list("abcd"), command_id="start-1")
            await log.produce(
                [Outgoing(TABLE_COMMANDS, "t", encode(CommandEnvelope(command=start)))]
            )

            async def dealt() -> bool:
                return ("t", "t#1") in await hand_logs(log)

            await _wait(dealt)
            letters = await dead_letters(log)
            stop.set()
            await asyncio.wait_for(task, 10)
        assert len(letters) == len(POISON)
        assert all(letter.reason for letter in letters)
        assert "nested too deeply" in letters[0].reason

    asyncio.run(go())


def test_matchmaking_refuses_unreadable_requests_and_serves_the_next(tmp_path: Path) -> None:
    async def go() -> None:
        async with log_in(tmp_path) as log:
            service = MatchmakingService(log)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            await log.produce([Outgoing(MATCH_REQUESTS, "p", raw) for raw in POISON])
            await send(log, lb.CreateTable(player="p-1", request_id="after-poison"))
            opened = await answer(log, "after-poison", 15)
            refused = await refusals(log)
            stop.set()
            await asyncio.wait_for(task, 10)
        assert isinstance(opened, lb.TableOpened)
        assert [r.code for r in refused] == ["malformed"] * len(POISON)

    asyncio.run(go())
