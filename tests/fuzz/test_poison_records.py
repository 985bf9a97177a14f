"""Records no decoder can read, on the topics the services consume, are set aside and the
services go on: the table service sends them to ``table.commands.dlq``, matchmaking answers
``malformed``, and the next command or request on the same partition is served.

Found by the decoder fuzzer: JSON nested a few thousand levels deep made msgspec raise
``RecursionError`` rather than ``DecodeError``. The services catch ``DecodeError`` only, so
such a record failed its transaction, was read again after recovery, failed again, and so
on for ever (about 5,000 failed transactions a second, each logged with its traceback),
while every other command of its partition waited. The decoders in ``schemas/`` now turn
it into a ``DecodeError``; these tests hold the services to it.

Then the hostile run of issue 17 found records that *are* well formed but that nothing
can apply: a ``rated_hand_result`` with points beyond int32 or a NUL in a player id stopped
the rating service for good; matchmaking queued a ``join_queue`` with ``computers_after_s``
= 10^30. The schemas bound every field now (``schemas/types.py``), so each input topic's
decoder refuses such records, and each service sets them aside and serves the next:
``OUT_OF_BOUNDS`` below holds one of each kind per input topic. (``lobby.events``, read by
the PostgreSQL projector, is covered in tests/integration/test_lobby_projection_poison.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import msgspec
import pytest

from schemas import lobby as lb
from schemas.rating import decode_result
from schemas.table import CommandEnvelope, DeadLetter, StartHand, decode_command, encode
from services.matchmaking.service import MatchmakingService
from services.rating.embedded import EmbeddedRatingStore
from services.rating.service import RatingService
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import MATCH_REQUESTS, RATING_DLQ, RATING_RESULTS, TABLE_COMMANDS
from services.table.service import TableService
from tests.service.lobby_client import answer, refusals, send
from tests.service.logs import dead_letters, hand_logs, records, started
from tests.service.rating_results import expected, fold_of, produce, sample, standings

DEEP = b"[" * 5_000 + b"]" * 5_000
POISON = [
    b'{"x": ' + DEEP + b', "command": {"type": "pass", "seat": 0, "table_id": "t"}, "v": 1}',
    b'{"command": {"type": "start_hand", "table_id": "t", "players": ' + DEEP + b"}}",
    DEEP,
    b'{"request": {"type": "leave_queue", "player": "p", "request_id": "r"}, "z": ' + DEEP + b"}",
]


_RESULT = (
    b'{"type": "rated_hand_result", "table_id": "t", "hand_id": "t#%s", "players": %s, '
    b'"points": %s, "rated": true, "clock": "standard"}'
)
_ABCD = b'["a", "b", "c", "d"]'
_POINTS = b"[1, 2, 3, -6]"
_REQUEST = b'{"request": {"type": "join_queue", "player": %s, "request_id": "r", %s}}'
_COMMAND = b'{"command": {"type": "discard", "seat": %s, "table_id": "t", "tile": "1m"%s}}'

OUT_OF_BOUNDS: dict[str, list[bytes]] = {
    RATING_RESULTS: [
        _RESULT % (b"1", _ABCD, b"[2147483648, 0, 0, -2147483648]"),
        _RESULT % (b"2", _ABCD, b"[1000000000000000000000000000000, 0, 0, 0]"),
        _RESULT % (b"3", b'["a\\u0000", "b", "c", "d"]', _POINTS),
        _RESULT % (b"4", b'["a", "b", "c", "d", "e"]', b"[1, 2, 3, -6, 0]"),
        _RESULT % (b"5", b'["' + b"x" * 65 + b'", "b", "c", "d"]', _POINTS),
        _RESULT % (b"6\\u0000", _ABCD, _POINTS),
    ],
    MATCH_REQUESTS: [
        _REQUEST % (b'"p-1"', b'"computers_after_s": 1000000000000000000000000000000'),
        _REQUEST % (b'"p-1"', b'"computers_after_s": -1'),
        _REQUEST % (b'"p\\u0000"', b'"rating": 1500'),
        _REQUEST % (b'""', b'"rating": 1500'),
        _REQUEST % (b'"p-1"', b'"rating": 1e400'),
        _REQUEST % (b'"p-1"', b'"rating": -1e6'),
    ],
    TABLE_COMMANDS: [
        _COMMAND % (b"4", b""),
        _COMMAND % (b"0", b', "command_id": "c\\u0000"'),
        _COMMAND % (b"0", b', "decision_seq": 1000000000000000000000'),
        _COMMAND % (b"0", b', "hand_id": "' + b"h" * 129 + b'"'),
    ],
}
"""Well-formed JSON of the right type, each with one field out of its bounds."""

_DECODERS = {
    RATING_RESULTS: decode_result,
    MATCH_REQUESTS: lb.decode_request,
    TABLE_COMMANDS: decode_command,
}


@pytest.mark.parametrize(
    ("topic", "raw"), [(t, raw) for t, raws in OUT_OF_BOUNDS.items() for raw in raws]
)
def test_every_input_decoder_refuses_a_field_out_of_bounds(topic: str, raw: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        _DECODERS[topic](raw)


def test_the_bounds_let_the_real_thing_through() -> None:
    assert decode_result(_RESULT % (b"1", _ABCD, _POINTS)).points == [1, 2, 3, -6]
    request = lb.decode_request(_REQUEST % (b'"p-1"', b'"computers_after_s": 600'))
    assert isinstance(request, lb.JoinQueue) and request.computers_after_s == 600
    assert decode_command(_COMMAND % (b"3", b', "decision_seq": 17')).seat == 3


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


def test_matchmaking_refuses_requests_out_of_bounds_and_queues_nobody(tmp_path: Path) -> None:
    async def go() -> None:
        async with log_in(tmp_path) as log:
            service = MatchmakingService(log)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            poison = OUT_OF_BOUNDS[MATCH_REQUESTS]
            await log.produce([Outgoing(MATCH_REQUESTS, "p-1", raw) for raw in poison])
            await send(log, lb.CreateTable(player="p-2", request_id="after-poison"))
            opened = await answer(log, "after-poison", 15)
            refused = await refusals(log)
            queued = dict(service.lobby.queue)
            stop.set()
            await asyncio.wait_for(task, 10)
        assert isinstance(opened, lb.TableOpened)
        assert [r.code for r in refused] == ["malformed"] * len(poison)
        assert all("at `$.request." in r.reason for r in refused)
        assert not queued

    asyncio.run(go())


def test_the_table_service_sets_commands_out_of_bounds_aside(tmp_path: Path) -> None:
    async def go() -> None:
        async with log_in(tmp_path) as log:
            service = TableService(log)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            poison = OUT_OF_BOUNDS[TABLE_COMMANDS]
            await log.produce([Outgoing(TABLE_COMMANDS, "t", raw) for raw in poison])
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
        assert len(letters) == len(poison)
        assert all("Expected" in letter.reason for letter in letters)

    asyncio.run(go())


def test_the_rating_service_sets_poison_results_aside_and_applies_the_rest(
    tmp_path: Path,
) -> None:
    real = sample(8, seed=41, players=8)
    poison = OUT_OF_BOUNDS[RATING_RESULTS]

    async def go() -> None:
        async with log_in(tmp_path) as log:
            store = EmbeddedRatingStore(tmp_path)
            await store.start()
            try:
                await produce(log, real[:4])
                await log.produce([Outgoing(RATING_RESULTS, "t", raw, 0) for raw in poison])
                await produce(log, real[4:])
                service = RatingService(log, store, max_batch=3)
                stop = asyncio.Event()
                task = asyncio.create_task(service.run(stop))
                end = len(real) + len(poison)

                async def through() -> bool:
                    return service.position >= end

                await _wait(through)
                stop.set()
                await asyncio.wait_for(task, 10)
                fold = fold_of(real)
                assert await standings(store, fold) == expected(fold)
                letters = [
                    msgspec.json.decode(r.value, type=DeadLetter)
                    for r in await records(log, RATING_DLQ)
                ]
            finally:
                await store.close()
        assert [x.source_offset for x in letters] == list(range(4, 4 + len(poison)))
        assert all(x.reason.startswith("undecodable: Expected") for x in letters)

    asyncio.run(go())
