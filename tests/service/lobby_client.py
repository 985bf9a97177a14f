"""Talking to matchmaking through its topics, for tests (embedded or Kafka)."""

from __future__ import annotations

import asyncio
import time

import msgspec

from schemas import lobby as lb
from schemas.table import CommandEnvelope, StartHand
from services.runtime.log import EventLog, Outgoing
from services.runtime.topics import LOBBY_EVENTS, MATCH_REPLIES, MATCH_REQUESTS, TABLE_COMMANDS
from tests.service.logs import records


async def send(log: EventLog, *requests: lb.Request) -> None:
    await log.produce(
        [
            Outgoing(MATCH_REQUESTS, r.player, msgspec.json.encode(lb.RequestEnvelope(request=r)))
            for r in requests
        ]
    )


async def lobby_events(log: EventLog) -> list[lb.Event]:
    return [lb.decode_lobby_event(r.value) for r in await records(log, LOBBY_EVENTS)]


async def refusals(log: EventLog) -> list[lb.RequestRefused]:
    return [
        msgspec.json.decode(r.value, type=lb.RequestRefused)
        for r in await records(log, MATCH_REPLIES)
    ]


async def starts(log: EventLog) -> list[StartHand]:
    out = []
    for r in await records(log, TABLE_COMMANDS):
        c = msgspec.json.decode(r.value, type=CommandEnvelope).command
        if isinstance(c, StartHand):
            out.append(c)
    return out


async def answer(
    log: EventLog, request_id: str, limit_s: float = 30
) -> lb.Event | lb.RequestRefused:
    """The first lobby event or refusal that answers ``request_id``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for e in await lobby_events(log):
            if e.request_id == request_id:
                return e
        for refusal in await refusals(log):
            if refusal.request_id == request_id:
                return refusal
        await asyncio.sleep(0.1)
    raise AssertionError(f"no answer to {request_id}")


async def until(log: EventLog, done, limit_s: float = 60) -> list[lb.Event]:  # type: ignore[no-untyped-def]
    """Lobby events, once ``done(events)`` holds."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        events = await lobby_events(log)
        if done(events):
            return events
        await asyncio.sleep(0.2)
    raise AssertionError("the lobby did not get there in time")


def seated_once(events: list[lb.Event], players: list[str]) -> dict[str, str]:
    """Each player's table, checking that each was seated exactly once, at tables of four
    that started."""
    seats: dict[str, list[str]] = {}
    for e in events:
        if isinstance(e, lb.SeatTaken):
            seats.setdefault(e.player, []).append(e.table_id)
    started = {e.table_id: e for e in events if isinstance(e, lb.TableStarted)}
    for p in players:
        assert len(seats.get(p, [])) == 1, f"{p} seated at {seats.get(p)}"
        table = started[seats[p][0]]
        assert p in table.players and len(table.players) == 4
    return {p: seats[p][0] for p in players}
