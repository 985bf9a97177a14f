"""What a client is told about a table: the lobby's word on it (``TableInfo``), the same on
the socket (``table`` frames) and over HTTP (``GET /api/tables/{id}``, the lobby list)."""

from __future__ import annotations

from typing import TypeVar

from schemas.types import COMPUTER_PREFIX
from services.gateway.gateway import Gateway
from services.gateway.protocol import SeatInfo, TableInfo

Info = TypeVar("Info", bound=TableInfo)


async def table_info(gw: Gateway, table_id: str, viewer: str | None, kind: type[Info]) -> Info:
    """``table_id`` as ``viewer`` may see it (``kind``: ``TableInfo`` or ``TableFrame``)."""
    t = gw.lobby.table(table_id)
    if t is None:
        status = "closed" if table_id in gw.lobby.closed else "unknown"
        return kind(table_id=table_id, status=status)  # type: ignore[arg-type]
    people = t.players if t.started else t.seated
    names = await gw.names(people)
    starting = t.stage == "starting"
    computer = {p: p.startswith(COMPUTER_PREFIX) for p in people}
    ratings = {p: await gw.rating_of(p) for p in people if starting and not computer[p]}
    return kind(
        table_id=t.table_id,
        status=t.stage,
        creator=t.creator,
        options=t.options,
        seated=[
            SeatInfo(
                player=p,
                name=names.get(p, p),
                computer=computer[p],
                rating=ratings.get(p),
                present=p in t.present,
            )
            for p in people
        ],
        code=t.code if viewer == t.creator else None,
        quick_play=t.quick_play,
        rated=t.options.rated and not t.computer_seats,
        play_again=not t.closes_after_hand,
        deal_by_ms=t.deal_by_ms if starting else None,
        ready=list(t.ready),
        done=list(t.done),
        leaving=list(t.leaving),
        totals=dict(t.totals),
        hands_played=t.hands_played,
    )
