"""Passwords, session tokens and secrets.

- Passwords are stored as argon2id hashes with at least OWASP's parameters (19 MiB, two
  passes), salted (one password, two hashes), never as given: not in the database file nor
  its write-ahead log. A hash with weaker parameters is upgraded at the next login. A login
  for a name that does not exist hashes all the same (no timing tell).
- Session tokens carry 256 random bits; the store keeps only their SHA-256. A token is
  refused once expired, on the REST API and the WebSocket alike, and once logged out.
- Logins at one account name are slowed after a few, from whatever addresses they come:
  the wait doubles up to a cap, early attempts do not lengthen it, and an address that
  logged into the account before is not slowed.
- Secrets come only from the environment: no file of the repository holds one, the admin
  token reaches the gateway only through ``MAHJONG_ADMIN_TOKEN``, and no command-line
  option takes a token or a password.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
import websockets
from argon2 import PasswordHasher
from argon2 import Type as Argon2Type
from argon2.exceptions import VerifyMismatchError

from services.gateway import accounts as acc
from services.gateway.config import ADMIN_TOKEN_ENV, DSN_ENV, GatewayConfig
from services.gateway.limits import LoginAttempts
from services.gateway.store_sqlite import SqliteAccountStore
from tests.service.gateway_harness import guest, platform

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"


async def _accounts(directory: Path, ttl_s: int = 3_600, guest_ttl_s: int = 600) -> acc.Accounts:
    store = SqliteAccountStore(directory)
    await store.start()
    return acc.Accounts(store, ttl_s, guest_ttl_s)


def _stored_hashes(directory: Path) -> list[str]:
    db = sqlite3.connect(directory / "gateway.sqlite3")
    try:
        return [h for (h,) in db.execute("SELECT password_hash FROM accounts") if h]
    finally:
        db.close()


def test_passwords_are_argon2id_salted_and_never_stored_as_given(tmp_path: Path) -> None:
    async def go() -> None:
        accounts = await _accounts(tmp_path)
        await accounts.register("alice", PASSWORD)
        await accounts.register("bob", PASSWORD)
        hashes = _stored_hashes(tmp_path)
        assert len(hashes) == 2 and hashes[0] != hashes[1]  # salted
        for stored in hashes:
            params = PasswordHasher.from_parameters(_parameters(stored))
            assert params.type is Argon2Type.ID
            assert params.memory_cost >= 19 * 1024 and params.time_cost >= 2
            assert params.salt_len >= 16 and params.hash_len >= 32
            assert PasswordHasher().verify(stored, PASSWORD)
            with pytest.raises(VerifyMismatchError):
                PasswordHasher().verify(stored, PASSWORD + "!")
        await accounts.store.close()
        for name in ("gateway.sqlite3", "gateway.sqlite3-wal"):
            path = tmp_path / name
            if path.exists():
                assert PASSWORD.encode() not in path.read_bytes(), name

    asyncio.run(go())


def _parameters(stored: str) -> object:
    from argon2 import extract_parameters

    return extract_parameters(stored)


def test_a_weaker_hash_is_upgraded_at_login(tmp_path: Path) -> None:
    async def go() -> None:
        accounts = await _accounts(tmp_path)
        session = await accounts.register("carol", PASSWORD)
        weak = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1).hash(PASSWORD)
        await accounts.store.set_password(session.account.id, "carol", weak)
        await accounts.login("carol", PASSWORD)
        (stored,) = _stored_hashes(tmp_path)
        assert stored != weak and not accounts.hasher.check_needs_rehash(stored)
        await accounts.store.close()

    asyncio.run(go())


def test_a_login_for_an_unknown_name_hashes_all_the_same(tmp_path: Path) -> None:
    async def go() -> None:
        accounts = await _accounts(tmp_path)
        await accounts.register("dave", PASSWORD)
        verified: list[str] = []
        real = accounts._verify

        async def counting(stored: str, password: str) -> bool:
            verified.append(stored)
            return await real(stored, password)

        accounts._verify = counting  # type: ignore[method-assign]
        for name, password in (("dave", "wrong-one"), ("nobody", PASSWORD), ("a!", PASSWORD)):
            with pytest.raises(acc.AccountError) as refused:
                await accounts.login(name, password)
            assert refused.value.code == "bad_credentials"
        assert len(verified) == 3  # one argon2 verification per attempt, known name or not
        await accounts.store.close()

    asyncio.run(go())


def test_session_tokens_are_random_stored_hashed_and_expire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> None:
        accounts = await _accounts(tmp_path, ttl_s=3_600, guest_ttl_s=600)
        now = acc.now_ms()
        member = await accounts.register("erin", PASSWORD)
        visitor = await accounts.guest()
        tokens = [member.token, visitor.token]
        assert all(len(t) >= 43 for t in tokens) and len(set(tokens)) == 2  # 32 bytes each
        assert abs(member.expires_ms - (now + 3_600_000)) < 5_000
        assert abs(visitor.expires_ms - (now + 600_000)) < 5_000
        db = sqlite3.connect(tmp_path / "gateway.sqlite3")
        stored = {h for (h,) in db.execute("SELECT token_hash FROM sessions")}
        db.close()
        assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in tokens}
        assert await accounts.authenticate(member.token) is not None
        assert await accounts.authenticate(member.token + "x") is None
        assert await accounts.authenticate("x" * 500) is None
        # Past each expiry, its token is refused.
        monkeypatch.setattr(acc, "now_ms", lambda: visitor.expires_ms + 1)
        assert await accounts.authenticate(visitor.token) is None
        assert await accounts.authenticate(member.token) is not None
        monkeypatch.setattr(acc, "now_ms", lambda: member.expires_ms + 1)
        assert await accounts.authenticate(member.token) is None
        await accounts.store.close()

    asyncio.run(go())


def test_an_expired_or_logged_out_token_opens_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            expired, out = await guest(p), await guest(p)
            p.gateway.accounts.store.db.execute(  # type: ignore[attr-defined]
                "UPDATE sessions SET expires_ms = 1 WHERE token_hash = ?",
                (hashlib.sha256(expired.token.encode()).hexdigest(),),
            )
            assert (await p.http.post("/api/auth/logout", headers=out.auth)).status_code == 204
            for user in (expired, out):
                assert (await p.http.get("/api/me", headers=user.auth)).status_code == 401
                r = await p.http.post("/api/tables", json={}, headers=user.auth)
                assert r.status_code == 401
                ws = await websockets.connect(p.ws_url)
                await ws.send(json.dumps({"type": "hello", "token": user.token, "table_id": "t"}))
                assert json.loads(await ws.recv())["code"] == "unauthorized"
                with pytest.raises(websockets.ConnectionClosed):
                    await ws.recv()
                assert ws.close_code == 1008

    asyncio.run(go())


def test_many_addresses_cannot_guess_one_accounts_password_quickly(tmp_path: Path) -> None:
    async def go() -> None:
        accounts = await _accounts(tmp_path)
        clock = [1_000.0]
        accounts.attempts.clock = lambda: clock[0]
        await accounts.register("alice", PASSWORD)
        await accounts.login("alice", PASSWORD, "198.51.100.7")  # her usual address
        for name in ("alice", "nobody"):  # an unknown name is slowed alike: no tell
            for i in range(5):
                with pytest.raises(acc.AccountError) as wrong:
                    await accounts.login(name, f"guess-{i}", f"203.0.113.{i}")
                assert wrong.value.code == "bad_credentials"
            for address in ("203.0.113.99", "192.0.2.1"):  # any further address waits
                with pytest.raises(acc.AccountError) as slowed:
                    await accounts.login(name, "guess-5", address)
                assert slowed.value.code == "too_many_attempts" and slowed.value.status == 429
                assert slowed.value.params["retry_after_s"] == 1
        # Even the right password waits, from a new address; from her usual one it works.
        with pytest.raises(acc.AccountError) as slowed:
            await accounts.login("alice", PASSWORD, "192.0.2.1")
        assert slowed.value.code == "too_many_attempts"
        assert (await accounts.login("alice", PASSWORD, "198.51.100.7")).account.name == "alice"
        # Once the wait is over, one more guess from anywhere; then twice as long a wait.
        clock[0] += 1.0
        with pytest.raises(acc.AccountError) as wrong:
            await accounts.login("nobody", "guess-6", "192.0.2.2")
        assert wrong.value.code == "bad_credentials"
        with pytest.raises(acc.AccountError) as slowed:
            await accounts.login("nobody", "guess-7", "192.0.2.3")
        assert slowed.value.params["retry_after_s"] == 2
        await accounts.store.close()

    asyncio.run(go())


def test_the_wait_per_account_doubles_up_to_a_cap_and_hammering_does_not_lengthen_it() -> None:
    attempts = LoginAttempts(free=3, cap_s=60.0)
    now = 1_000.0
    for i in range(3):
        assert attempts.attempt("Bob", f"a{i}", now) == 0
    waits = []
    for i in range(12):
        wait = attempts.attempt("bob", f"b{i}", now)  # names are case-insensitive
        assert wait > 0
        assert attempts.attempt("BOB", f"c{i}", now + wait / 2) > 0  # early: not counted
        now += wait
        assert attempts.attempt("bob", f"d{i}", now) == 0
        waits.append(wait)
    assert waits[:6] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0] and set(waits[6:]) == {60.0}
    attempts.succeeded("bob", "d11")
    assert attempts.attempt("bob", "e", now) == 0  # a success clears the count
    # Trying very many other names does not push a slowed name out of memory.
    small = LoginAttempts(free=2, cap_s=60.0, max_names=10)
    small.attempt("carol", "x", 0.0)
    small.attempt("carol", "x", 0.0)
    for i in range(1_000):
        small.attempt(f"spray-{i}", "x", 0.5)
    assert small.attempt("carol", "y", 0.5) > 0


def test_a_slowed_login_answers_429_with_retry_after(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            r = await p.http.post("/api/auth/register", json={"name": "dora", "password": PASSWORD})
            assert r.status_code == 201
            statuses = []
            for i in range(9):
                r = await p.http.post(
                    "/api/auth/login", json={"name": "dora", "password": f"wrong-{i}"}
                )
                statuses.append(r.status_code)
                if r.status_code == 429:
                    break
            assert statuses[:5] == [401] * 5 and statuses[-1] == 429, statuses
            assert r.json()["code"] == "too_many_attempts"
            assert int(r.headers["retry-after"]) == r.json()["params"]["retry_after_s"] >= 1

    asyncio.run(go())


# --- secrets only from the environment --------------------------------------------------------

SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "AWS key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "Google key": re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    "JWT": re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]+"),
}
CREDENTIAL_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://([^/\s:@'\"]+):([^@\s'\"/]+)@([^/\s:'\"]+)")
SECRET_ASSIGNMENT = re.compile(
    r"(?i)\b([a-z_]*(?:secret|password|passwd|api_?key|admin_?token|auth_?token))\b"
    r"[\"']?\s*[:=]\s*[\"']([^\"'\s]{6,})[\"']"
)
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}
# Where `password: "..."` is no secret: the web client's words and form attributes, and the
# tests' own fixtures (test accounts, the local database). Keys and tokens are looked for
# there too. The local development database of deploy/postgres (trust auth on 127.0.0.1
# only; its password is its role's name) is the one credential allowed in a URL.
NOT_SECRETS = ("services/gateway/static/", "tests/")
TEXT = {".py", ".sh", ".md", ".yml", ".yaml", ".toml", ".json", ".js", ".html", ".cfg", ".ini"}
SKIP_DIRS = ("test-artifacts/", "docs/images/", "tests/browser/vendor/")


def _repository_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    files = []
    for name in out:
        path = ROOT / name
        if name.startswith(SKIP_DIRS) or not path.is_file():
            continue
        if path.suffix in TEXT or path.name in ("Makefile", "Dockerfile", ".env"):
            files.append(path)
    return files


def _env_reference(value: str) -> bool:
    """A reference to a secret rather than one: ``$VAR``, ``${VAR:-…}``, ``<password>``, an
    environment variable's NAME, or a placeholder word."""
    placeholder = value.lower() in ("password", "pass", "secret", "token")
    return value.startswith(("$", "<")) or value.upper() == value or placeholder


def test_no_secret_is_written_into_the_repository() -> None:
    files = _repository_files()
    assert len(files) > 50
    found = []
    for path in files:
        text = path.read_text(errors="replace")
        where = path.relative_to(ROOT)
        for what, pattern in SECRET_PATTERNS.items():
            found += [f"{where}: {what}" for _ in pattern.finditer(text)]
        for user, password, host in CREDENTIAL_URL.findall(text):
            if not (_env_reference(password) or host.split(":")[0] in LOCAL_HOSTS):
                found.append(f"{where}: credentials in a URL for {user}@{host}")
        if str(where).startswith(NOT_SECRETS):
            continue
        for name, value in SECRET_ASSIGNMENT.findall(text):
            if not _env_reference(value):
                found.append(f"{where}: {name} = {value[:4]}…")
    assert found == []


def test_the_admin_token_and_database_dsn_come_from_the_environment_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (ADMIN_TOKEN_ENV, *DSN_ENV):
        monkeypatch.delenv(name, raising=False)
    assert GatewayConfig().admin_token is None and GatewayConfig().postgres_dsn is None
    assert GatewayConfig.from_env().admin_token is None
    monkeypatch.setenv(ADMIN_TOKEN_ENV, "from-the-environment")
    monkeypatch.setenv(DSN_ENV[0], "postgresql:///from-the-environment")
    config = GatewayConfig.from_env(port=9)
    assert config.admin_token == "from-the-environment"
    assert config.postgres_dsn == "postgresql:///from-the-environment"
    # In the code, the admin token is only ever given from the environment.
    for path in (ROOT / "services").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "admin_token":
                source = ast.unparse(node.value)
                assert "os.environ" in source or "getenv" in source, f"{path}: {source}"
            if isinstance(node, ast.Constant) and node.value == ADMIN_TOKEN_ENV:
                assert path.name in ("config.py", "cli.py"), path


def test_no_command_line_option_takes_a_token_or_password() -> None:
    from services.cli import build_parser

    def options(parser: object) -> list[tuple[str, str]]:
        out = []
        for action in parser._actions:  # type: ignore[attr-defined]
            if action.choices and isinstance(action.choices, dict):  # subcommands
                for name, sub in action.choices.items():
                    out += [(f"{name} {o}", d) for o, d in options(sub)]
            out += [(o, action.dest) for o in action.option_strings]
        return out

    found = options(build_parser())
    assert len(found) > 20
    secret = re.compile(r"(?i)token|secret|passw|credential|api.?key")
    assert [o for o, dest in found if secret.search(o) or secret.search(dest)] == []
    # The gateway takes its PostgreSQL DSN (which may hold a password) from the environment
    # only; `--postgres DSN` of other commands is reported in docs/security.md.
    assert not [o for o, _ in found if o.startswith(("gateway ", "run ")) and "postgres" in o]
