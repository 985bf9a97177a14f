"""The gateway's REST side on the embedded log: accounts and sessions, the lobby and private
tables, Quick Play and practice through matchmaking, rate and size limits, hand export and
replay, profiles, admin routes, and the published OpenAPI and protocol schemas."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from services.gateway.config import Limits, Rate
from services.gateway.history import STEP_EVENTS
from services.gateway.protocol import protocol_schema
from tests.service.gateway_harness import (
    ADMIN,
    connect,
    guest,
    platform,
    play_with_bot,
    table_of_four,
)


def test_accounts_sessions_and_guests(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            http = p.http
            r = await http.post("/api/auth/register", json={"name": "alice", "password": "pw"})
            assert r.status_code == 400 and r.json()["code"] == "bad_password"
            r = await http.post("/api/auth/register", json={"name": "a!", "password": "x" * 8})
            assert r.json()["code"] == "name_bad_character"
            assert r.json()["params"] == {"char": "!", "codepoint": "U+0021"}
            r = await http.post(
                "/api/auth/register", json={"name": "Alice", "password": "s3cret-pw"}
            )
            assert r.status_code == 201
            alice = r.json()
            assert alice["account"]["name"] == "Alice" and not alice["account"]["guest"]
            r = await http.post(
                "/api/auth/register", json={"name": "alice", "password": "another1"}
            )
            assert r.status_code == 409 and r.json()["code"] == "name_taken"
            # One answer for a wrong password and an unknown name.
            wrong = await http.post(
                "/api/auth/login", json={"name": "alice", "password": "nope1234"}
            )
            unknown = await http.post(
                "/api/auth/login", json={"name": "bob", "password": "nope1234"}
            )
            assert wrong.status_code == unknown.status_code == 401
            assert wrong.json() == unknown.json()
            r = await http.post("/api/auth/login", json={"name": "ALICE", "password": "s3cret-pw"})
            assert r.status_code == 200
            token = r.json()["token"]
            auth = {"authorization": f"Bearer {token}"}
            me = (await http.get("/api/me", headers=auth)).json()
            assert me["account"]["id"] == alice["account"]["id"]
            # Tokens are stored hashed, never as given; the password as argon2.
            db = sqlite3.connect(tmp_path / "gateway.sqlite3")
            stored = [row[0] for row in db.execute("SELECT token_hash FROM sessions")]
            assert token not in stored and len(stored) == 2
            (hashed,) = db.execute("SELECT password_hash FROM accounts").fetchone()
            assert hashed.startswith("$argon2id$")
            db.close()
            assert (await http.post("/api/auth/logout", headers=auth)).status_code == 204
            assert (await http.get("/api/me", headers=auth)).status_code == 401
            assert (await http.get("/api/me")).status_code == 401
            # A guest plays at once and can become a full account, keeping its id.
            g = await guest(p)
            assert g.name.startswith("Guest-")
            r = await http.post(
                "/api/auth/register",
                json={"name": "carol", "password": "pw-carol1"},
                headers=g.auth,
            )
            assert r.status_code == 201 and r.json()["account"]["id"] == g.id
            assert (await http.get("/api/me", headers=g.auth)).json()["account"]["name"] == "carol"

    asyncio.run(go())


def test_sessions_expire(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            g = await guest(p)
            store = p.gateway.accounts.store
            db = store.db  # type: ignore[attr-defined]
            db.execute("UPDATE sessions SET expires_ms = 1")
            assert (await p.http.get("/api/me", headers=g.auth)).status_code == 401
            assert await store.delete_expired(10) == 1

    asyncio.run(go())


def test_private_tables_need_their_code(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            owner, other = await guest(p), await guest(p)
            r = await p.http.post(
                "/api/tables",
                json={"options": {"public": False, "clock": "standard"}},
                headers=owner.auth,
            )
            assert r.status_code == 201
            table_id, code = r.json()["table_id"], r.json()["code"]
            assert code
            for attempt in (None, "wrong-code"):
                r = await p.http.post(
                    f"/api/tables/{table_id}/join", json={"code": attempt}, headers=other.auth
                )
                assert r.status_code == 409 and r.json()["code"] == "no_such_table"
            lobby = (await p.http.get("/api/lobby", headers=other.auth)).json()
            assert table_id not in [t["table_id"] for t in lobby["tables"]]
            r = await p.http.get(f"/api/tables/{table_id}", headers=other.auth)
            assert r.status_code == 404
            mine = (await p.http.get(f"/api/tables/{table_id}", headers=owner.auth)).json()
            assert mine["code"] == code and mine["status"] == "open"
            r = await p.http.post(
                f"/api/tables/{table_id}/join", json={"code": code}, headers=other.auth
            )
            assert r.status_code == 200
            seen = (await p.http.get(f"/api/tables/{table_id}", headers=other.auth)).json()
            assert seen["code"] is None and len(seen["seated"]) == 2
            # Public tables are listed; leaving empties and closes them.
            r = await p.http.post(
                "/api/tables",
                json={"options": {"public": True}},
                headers=(third := await guest(p)).auth,
            )
            public_id = r.json()["table_id"]
            assert r.json()["code"] is None
            lobby = (await p.http.get("/api/lobby", headers=owner.auth)).json()
            assert [t["table_id"] for t in lobby["tables"]] == [public_id]
            r = await p.http.post(f"/api/tables/{public_id}/leave", headers=third.auth)
            assert r.status_code == 200
            lobby = (await p.http.get("/api/lobby", headers=owner.auth)).json()
            assert lobby["tables"] == []

    asyncio.run(go())


def test_quick_play_and_practice_go_through_matchmaking(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            me = await guest(p)
            r = await p.http.post("/api/quickplay", json={}, headers=me.auth)
            assert r.status_code == 200
            assert (await p.http.get("/api/me", headers=me.auth)).json()["queue_since_ms"]
            r = await p.http.post("/api/quickplay", json={}, headers=me.auth)
            assert r.status_code == 409 and r.json()["code"] == "in_queue"
            assert (await p.http.delete("/api/quickplay", headers=me.auth)).status_code == 200
            r = await p.http.post("/api/quickplay", json={"computers_after_s": 1}, headers=me.auth)
            assert r.status_code == 400 and r.json()["code"] == "bad_wait"
            r = await p.http.post(
                "/api/practice", json={"strength": "easy", "pace": "fast"}, headers=me.auth
            )
            assert r.status_code == 201 and r.json()["started"]
            table_id = r.json()["table_id"]
            s = await connect(p, me, table_id)
            await s.until(lambda x: x.view is not None and bool(x.of_type("table")))
            view = s.view["view"]
            assert view["clock"] is None  # practice is untimed
            players = [x["player"] for x in view["players"]]
            assert sorted(x.startswith("computer:easy:") for x in players) == [
                False,
                True,
                True,
                True,
            ]
            assert view["players"][view["seat"]]["player"] == me.id
            table = s.of_type("table")[-1]
            assert table["status"] == "started" and table["options"]["rated"] is False
            assert table["options"]["public"] is False and "hands" not in table["options"]
            await s.close()

    asyncio.run(go())


def test_matchmaking_down_gives_a_clear_error(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path, matchmaking=False) as p:
            p.gateway.lobby.timeout_s = 0.5
            me = await guest(p)
            r = await p.http.post("/api/tables", json={}, headers=me.auth)
            assert r.status_code == 503 and r.json()["code"] == "matchmaking_unavailable"

    asyncio.run(go())


def test_rate_and_size_limits(tmp_path: Path) -> None:
    limits = Limits(
        http=Rate(1.0, 8.0), auth=Rate(0.1, 3.0), static=Rate(1.0, 10.0), max_body_bytes=2048
    )

    async def go() -> None:
        async with platform(tmp_path, limits=limits) as p:
            codes = [(await p.http.post("/api/auth/guest")).status_code for _ in range(5)]
            assert codes == [201, 201, 201, 429, 429]
            r = await p.http.post("/api/auth/guest")
            assert r.json()["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
            r = await p.http.post(
                "/api/auth/login",
                content=b"{" + b" " * 5000 + b"}",
                headers={"content-type": "application/json"},
            )
            assert r.status_code in (413, 429)
            statuses = [(await p.http.get("/api/lobby")).status_code for _ in range(10)]
            assert 429 in statuses
            # The web client and health check have a bucket of their own.
            assert (await p.http.get("/")).status_code == 200
            assert (await p.http.get("/healthz")).json()["ok"]
            static = [(await p.http.get("/style.css")).status_code for _ in range(20)]
            assert static.count(200) >= 8 and static[-1] == 429

    asyncio.run(go())


def test_body_size_limit(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path, limits=Limits(max_body_bytes=1024)) as p:
            r = await p.http.post(
                "/api/auth/login",
                content=b"{" + b" " * 5000 + b"}",
                headers={"content-type": "application/json"},
            )
            assert r.status_code == 413 and r.json()["code"] == "too_large"
            r = await p.http.post(
                "/api/auth/login",
                content=b"{not json",
                headers={"content-type": "application/json"},
            )
            assert r.status_code == 400

    asyncio.run(go())


STEP_TYPES = {t.__struct_config__.tag for t in STEP_EVENTS}


def test_hand_export_replay_and_history(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": False})
            sockets = [await connect(p, u, table_id) for u in users]
            others = asyncio.gather(*(play_with_bot(s) for s in sockets[1:]))
            await asyncio.wait_for(play_with_bot(sockets[0], stop_at_seq=30), 60)
            hand_id = sockets[0].hand_id
            assert hand_id is not None
            url = f"/api/hands/{hand_id.replace('#', '%23')}"
            # Mid-hand: a player gets the log as its seat may see it; a stranger nothing.
            mid = (await p.http.get(f"{url}/export", headers=users[0].auth)).json()
            assert mid["finished"] is False
            seat = mid["seat"]
            for e in mid["events"]:
                if e["type"] == "tiles_dealt":
                    assert e["seat"] == seat
                assert e["type"] != "wall_built"
            stranger = await guest(p)
            r = await p.http.get(f"{url}/export", headers=stranger.auth)
            assert r.status_code == 404
            r = await p.http.get(f"{url}/replay", headers=users[0].auth)
            assert r.status_code == 409 and r.json()["code"] == "hand_not_over"
            await asyncio.wait_for(asyncio.gather(play_with_bot(sockets[0]), others), 120)
            # Finished: everything, for its players; a private table's hands for nobody else.
            full = (await p.http.get(f"{url}/export", headers=users[1].auth)).json()
            assert full["finished"] and full["seat"] is not None
            kinds = [e["type"] for e in full["events"]]
            assert (
                kinds.count("tiles_dealt") == 4 and "wall_built" in kinds and "hidden" not in kinds
            )
            assert kinds[-1] == "hand_ended" and full["events"][-1]["seed"]
            for route in ("export", "replay"):
                r = await p.http.get(f"{url}/{route}", headers=stranger.auth)
                assert r.status_code == 404 and r.json()["code"] == "no_such_hand", route
            # The replay: one step per game action, every hand shown, or one seat's view.
            replay = (await p.http.get(f"{url}/replay", headers=users[0].auth)).json()
            assert len(replay["steps"]) == sum(k in STEP_TYPES for k in kinds)
            assert replay["seed"] == full["events"][-1]["seed"] and replay["commitment"]
            assert replay["public"] is False and replay["seat"] is None
            assert replay["settlement"][-1]["type"] == "hand_ended"
            middle = replay["steps"][len(replay["steps"]) // 2]["view"]
            assert all(x["hand"] is not None for x in middle["players"])
            assert set(replay["names"]) == {u.id for u in users}
            mine = (await p.http.get(f"{url}/replay?seat=2", headers=users[0].auth)).json()
            assert [s["seq"] for s in mine["steps"]] == [s["seq"] for s in replay["steps"]]
            middle = mine["steps"][len(mine["steps"]) // 2]["view"]
            assert middle["seat"] == 2
            assert all(
                x["hand"] is None for x in middle["players"] if x["seat"] != 2 and not x["won"]
            )
            r = await p.http.get(f"{url}/replay?seat=4", headers=users[0].auth)
            assert r.status_code == 400
            for _ in range(50):
                hands = (
                    await p.http.get(f"/api/players/{users[0].id}/hands", headers=users[0].auth)
                ).json()
                if hands:
                    break
                await asyncio.sleep(0.1)
            assert [h["hand_id"] for h in hands] == [hand_id]
            assert hands[0]["score"] == full["events"][-1]["scores"][seat]
            for s in sockets:
                await s.close()

    asyncio.run(go())


def test_profiles_ratings_and_admin_routes(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            me = await guest(p)
            profile = (await p.http.get(f"/api/players/{me.id}", headers=me.auth)).json()
            assert profile["rating"] == 1500 and profile["provisional"] and profile["history"] == []
            assert (await p.http.get("/api/ratings/leaderboard", headers=me.auth)).json() == []
            mine = (await p.http.get("/api/ratings/leaderboard/me", headers=me.auth)).json()
            assert (mine["rank"], mine["of"], mine["provisional"]) == (None, 0, True)
            r = await p.http.get("/api/players/p-nobody", headers=me.auth)
            assert r.status_code == 404
            # Admin routes want the admin credential, not a session.
            for path in ("/api/admin/audit", "/api/admin/ratings/recompute"):
                assert (await p.http.post(path)).status_code == 401
                assert (await p.http.post(path, headers=me.auth)).status_code == 401
            admin = {"authorization": f"Bearer {ADMIN}"}
            audit = (await p.http.post("/api/admin/audit", headers=admin)).json()
            assert audit["failed"] == 0
            r = await p.http.post("/api/admin/ratings/recompute", headers=admin)
            assert r.status_code == 200 and r.json()["ok"]

    asyncio.run(go())


def test_openapi_and_protocol_schema_are_published(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            spec = (await p.http.get("/schema/openapi.json")).json()
            paths = spec["paths"]
            for path in (
                "/api/auth/guest",
                "/api/lobby",
                "/api/tables",
                "/api/quickplay",
                "/api/practice",
                "/api/hands/{hand_id}/export",
                "/api/ratings/leaderboard",
                "/api/admin/audit",
            ):
                assert path in paths, path
            schema = (await p.http.get("/api/protocol.schema.json")).json()
            assert schema == protocol_schema()
            tags = {
                d["properties"]["type"]["enum"][0]
                for d in schema["$defs"].values()
                if "type" in d.get("properties", {}) and "enum" in d["properties"]["type"]
            }
            assert {
                "hello",
                "command",
                "ping",
                "welcome",
                "view",
                "events",
                "rejected",
                "error",
                "pong",
                "table",
                "hidden",
            } <= tags
            page = await p.http.get("/")
            assert "content-security-policy" in page.headers

    asyncio.run(go())


def test_the_leaderboard_lists_provisional_players_after_the_established_and_ranks_me(
    tmp_path: Path,
) -> None:
    """Four guests play ten rated hands (established), a fifth one more with three of them
    (provisional): the rating service applies the results, the gateway lists all five,
    established first, and each one's own rank is the line the list gives them."""
    from schemas.rating import RatedHandResult
    from services.rating.embedded import EmbeddedRatingStore
    from services.rating.service import RatingService
    from tests.service.rating_results import produce

    async def go() -> None:
        async with platform(tmp_path) as p:
            users = [await guest(p) for _ in range(5)]
            four, late = [u.id for u in users[:4]], users[4]
            results = [
                RatedHandResult(
                    table_id="t-r",
                    hand_id=f"t-r#{k}",
                    players=four[k % 4 :] + four[: k % 4],
                    points=[3, 1, -1, -3],
                    rated=True,
                    clock="standard",
                )
                for k in range(10)
            ]
            results.append(
                RatedHandResult(
                    table_id="t-r",
                    hand_id="t-r#10",
                    players=[late.id, *four[:3]],
                    points=[9, -3, -3, -3],
                    rated=True,
                    clock="standard",
                )
            )
            store = EmbeddedRatingStore(tmp_path)
            await store.start()
            service = RatingService(p.log, store)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            await produce(p.log, results)
            async with asyncio.timeout(30):
                while service.position < len(results):
                    await asyncio.sleep(0.02)
            stop.set()
            await task
            await store.close()
            r = await p.http.get("/api/ratings/leaderboard", headers=late.auth)
            board = r.json()
            assert [x["rank"] for x in board] == [1, 2, 3, 4, 5]
            assert [x["provisional"] for x in board] == [False] * 4 + [True]
            assert board[4]["player"] == late.id and board[4]["name"] == late.name
            # The late one won against established players: rated above some, listed after.
            assert board[4]["rating"] > min(x["rating"] for x in board[:4])
            ratings = [x["rating"] for x in board[:4]]
            assert ratings == sorted(ratings, reverse=True)
            for u in users:
                mine = (await p.http.get("/api/ratings/leaderboard/me", headers=u.auth)).json()
                line = next(x for x in board if x["player"] == u.id)
                assert (mine["rank"], mine["of"], mine["name"]) == (line["rank"], 5, u.name)
                assert mine["provisional"] == line["provisional"]
            # Established players only: the provisional one is not ranked there.
            only = "provisional=false"
            r = await p.http.get(f"/api/ratings/leaderboard?{only}", headers=late.auth)
            assert [x["player"] for x in r.json()] == [x["player"] for x in board[:4]]
            r = await p.http.get(f"/api/ratings/leaderboard/me?{only}", headers=late.auth)
            assert (r.json()["rank"], r.json()["of"]) == (None, 4)
            r = await p.http.get("/api/ratings/leaderboard?limit=2&offset=3", headers=late.auth)
            assert [x["rank"] for x in r.json()] == [4, 5]

    asyncio.run(go())


def test_expert_computers_may_be_chosen_for_practice_and_tables(tmp_path: Path) -> None:
    """The strength is accepted (the bots service plays it: services/bots STRENGTHS)."""

    async def go() -> None:
        async with platform(tmp_path) as p:
            me = await guest(p)
            r = await p.http.post("/api/practice", json={"strength": "expert"}, headers=me.auth)
            assert r.status_code == 201, r.text
            other = await guest(p)
            options = {"computers": "expert", "clock": None}
            r = await p.http.post("/api/tables", json={"options": options}, headers=other.auth)
            assert r.status_code == 201, r.text
            r = await p.http.post("/api/practice", json={"strength": "master"}, headers=me.auth)
            assert r.status_code == 400

    asyncio.run(go())
