"""Computer reviews through the gateway (issue 21): a player of a finished hand asks for one
(a ``ReviewRequest`` on ``analysis.requests``), the review the analysis service writes to
``analysis.results`` is served to those who may open the replay, and My hands shows the
player's accuracy. The analysis service itself is not run: the test writes its review."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec

from schemas import analysis as an
from schemas.commands import Discard
from services.runtime.log import Outgoing, read_through
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS
from tests.service.gateway_harness import (
    Platform,
    connect,
    guest,
    platform,
    play_one_hand,
    play_with_bot,
    table_of_four,
)


def _url(hand_id: str) -> str:
    return f"/api/hands/{hand_id.replace('#', '%23')}/review"


async def _requests(p: Platform) -> list[an.ReviewRequest]:
    return [an.decode_request(r.value) async for r in read_through(p.log, ANALYSIS_REQUESTS, 0, 0)]


async def _rows(p: Platform, player: Any) -> list[dict[str, Any]]:
    for _ in range(100):
        r = await p.http.get(f"/api/players/{player.id}/hands", headers=player.auth)
        if r.json():
            return list(r.json())
        await asyncio.sleep(0.1)
    raise AssertionError("the hand never reached the history")


def _review(hand_id: str, table_id: str, request_id: str, players: list[str]) -> an.HandReview:
    def decision(seat: int, mark: an.Mark, loss: float) -> an.ReviewedDecision:
        played, best = Discard(seat=seat, tile="5s"), Discard(seat=seat, tile="9p")
        return an.ReviewedDecision(
            seat=seat,
            seq=40,
            kind="turn",
            played=played,
            best=best,
            loss=loss,
            mark=mark,
            options=[
                an.OptionValue(option=best, value=1.0),
                an.OptionValue(option=played, value=1.0 - loss),
            ],
        )

    return an.HandReview(
        hand_id=hand_id,
        table_id=table_id,
        request_id=request_id,
        seats=[
            an.SeatReview(seat=0, player_id=players[0], decisions=1, blunders=1, accuracy=42.5),
            an.SeatReview(seat=1, player_id=players[1], decisions=1, best=1, accuracy=100.0),
        ],
        decisions=[decision(0, "blunder", 3.5), decision(1, "best", 0.0)],
        reviewed_at_ms=2**50,
    )


def test_a_player_asks_for_a_review_and_the_analysis_results_show_in_the_replay_and_my_hands(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await play_one_hand(p, {"clock": None, "hands": 1, "public": False})
            rows = await _rows(p, users[0])
            hand_id = rows[0]["hand_id"]
            assert rows[0]["accuracy"] is None
            url = _url(hand_id)
            r = await p.http.get(url, headers=users[0].auth)
            assert r.status_code == 404 and r.json()["code"] == "review_not_found"

            # A player asks: one request for every human seat, and the hand is pending.
            r = await p.http.post(url, headers=users[0].auth)
            assert r.status_code == 202 and r.json() == {
                "hand_id": hand_id,
                "status": "pending",
                "review": None,
            }
            [request] = await _requests(p)
            assert (request.hand_id, request.table_id) == (hand_id, table_id)
            assert request.seats == [] and request.requested_by == users[0].id
            assert request.requested_at_ms > 0 and request.request_id
            r = await p.http.get(url, headers=users[1].auth)
            assert r.status_code == 202 and r.json()["status"] == "pending"
            # Asking again while it is pending sends nothing more.
            r = await p.http.post(url, headers=users[2].auth)
            assert r.status_code == 202 and len(await _requests(p)) == 1

            # The analysis service's review arrives: the replay's players get it.
            players = rows[0]["players"]
            review = _review(hand_id, table_id, request.request_id, players)
            await p.log.produce([Outgoing(ANALYSIS_RESULTS, hand_id, an.encode(review))])
            for _ in range(50):
                r = await p.http.get(url, headers=users[3].auth)
                if r.status_code == 200:
                    break
                await asyncio.sleep(0.1)
            assert r.status_code == 200 and r.json()["status"] == "done"
            body = r.json()["review"]
            assert msgspec.convert(body, an.HandReview) == review
            assert body["hand_id"] == hand_id and body["decisions"][0]["mark"] == "blunder"
            assert [o["option"]["tile"] for o in body["decisions"][0]["options"]] == ["9p", "5s"]
            # Asking now answers with the review, and sends nothing.
            r = await p.http.post(url, headers=users[0].auth)
            assert r.status_code == 200 and r.json()["review"]["seats"][0]["accuracy"] == 42.5
            assert len(await _requests(p)) == 1

            # My hands: each player's own seat's accuracy.
            by_player = {u.id: u for u in users}
            for s, expected in ((0, 42.5), (1, 100.0), (2, None)):
                [row] = await _rows(p, by_player[players[s]])
                assert row["accuracy"] == expected, s

    asyncio.run(go())


def test_a_stranger_to_a_private_hand_gets_no_review_and_cannot_ask(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            _, users = await play_one_hand(p, {"clock": None, "hands": 1, "public": False})
            hand_id = (await _rows(p, users[0]))[0]["hand_id"]
            stranger = await guest(p)
            for method in ("GET", "POST"):
                r = await p.http.request(method, _url(hand_id), headers=stranger.auth)
                assert r.status_code == 404 and r.json()["code"] == "no_such_hand", method
            assert await _requests(p) == []
            r = await p.http.post(_url("t-nope#1"), headers=users[0].auth)
            assert r.status_code == 404 and r.json()["code"] == "no_such_hand"
            assert (await p.http.post(_url(hand_id))).status_code == 401

    asyncio.run(go())


def test_a_hand_in_play_cannot_be_reviewed_and_a_public_hands_watcher_cannot_ask(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": True})
            sockets = [await connect(p, u, table_id) for u in users]
            others = asyncio.gather(*(play_with_bot(s) for s in sockets[1:]))
            await asyncio.wait_for(play_with_bot(sockets[0], stop_at_seq=30), 60)
            hand_id = sockets[0].hand_id
            assert hand_id is not None
            r = await p.http.post(_url(hand_id), headers=users[0].auth)
            assert r.status_code == 409 and r.json()["code"] == "hand_not_ended"
            assert r.json()["params"] == {"hand_id": hand_id}
            await asyncio.wait_for(asyncio.gather(play_with_bot(sockets[0]), others), 120)
            # Anyone may open a public table's replay, and so its review; only its players ask.
            watcher = await guest(p)
            r = await p.http.post(_url(hand_id), headers=watcher.auth)
            assert r.status_code == 403 and r.json()["code"] == "not_in_hand"
            r = await p.http.get(_url(hand_id), headers=watcher.auth)
            assert r.status_code == 404 and r.json()["code"] == "review_not_found"
            assert await _requests(p) == []
            for s in sockets:
                await s.close()

    asyncio.run(go())
