"""The message decoders under arbitrary bytes, arbitrary JSON and near-valid messages.

Every decoder that reads what another process (or a client) wrote, ``schemas.table``'s
``decode_command`` and ``decode_event``, ``schemas.lobby``'s ``decode_request`` and
``decode_lobby_event``, ``schemas.rating.decode_result`` and the gateway's WebSocket frames
(``protocol.decode_client``, then a command body as ``connection.py`` turns it into a
``schemas.commands`` command), either returns a message of its type or raises
``msgspec.DecodeError`` (``ValidationError`` is one): nothing else, whatever the input. A
message it accepts encodes and decodes again to itself.

Inputs: arbitrary bytes and text; arbitrary JSON documents; valid messages of every type
(from played hands, timed and untimed, and the lobby) with a few fields dropped, replaced
by any JSON, retagged, or with unknown fields added; valid encodings cut, flipped and
spliced byte by byte (a seeded bulk run); and nesting thousands of levels deep.
``MAHJONG_FUZZ_SCALE`` multiplies every count for a longer campaign.
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from schemas import lobby as lb
from schemas.commands import Command
from schemas.events import Event
from schemas.rating import RatedHandResult, decode_result, encode_result
from schemas.table import CommandEnvelope, EventEnvelope, StartHand, decode_command, decode_event
from schemas.table import encode as encode_envelope
from services.gateway import protocol as proto
from services.rules.clock import PRESETS
from services.rules.hand import legal_actions
from services.rules.selfplay import play_random_hand
from services.rules.state import pending_seats
from tests.fuzz import jsonfuzz
from tests.fuzz import tally as fuzz_tally
from tests.fuzz.hands import deal, play_step

FILLED_BY_GATEWAY = ("seat", "table_id", "command_id", "hand_id", "decision_seq")
SCALE = float(os.environ.get("MAHJONG_FUZZ_SCALE", "1"))
BULK = int(20_000 * SCALE)  # seeded inputs per bulk run
EXAMPLES = max(1, int(SCALE))  # multiplies Hypothesis's examples


def gateway_command(raw: str | bytes) -> object:
    """A WebSocket frame as ``connection.py`` reads it: the frame, and for a command frame
    the ``schemas.commands`` command its body makes once the gateway fills in the seat."""
    frame = proto.decode_client(raw)
    if isinstance(frame, proto.CommandFrame):
        body = dict(frame.body)
        for key in FILLED_BY_GATEWAY:
            body.pop(key, None)
        body.update(seat=1, table_id="t", command_id="p/c", hand_id="t#1", decision_seq=None)
        return msgspec.convert(body, Command)
    return frame


def _lobby_request(raw: bytes) -> lb.Request:
    return lb.decode_request(raw)


def _lobby_event(raw: bytes) -> lb.Event:
    return lb.decode_lobby_event(raw)


# Each decoder, what it returns, and how to encode that again (for the round trip).
DECODERS: dict[str, tuple[Callable[[Any], Any], Any, Callable[[Any], bytes]]] = {
    "command": (
        decode_command,
        (*cmd.COMMAND_TYPES, StartHand),
        lambda m: encode_envelope(CommandEnvelope(command=m)),
    ),
    "event": (decode_event, Event, lambda m: encode_envelope(EventEnvelope(event=m))),
    "request": (
        _lobby_request,
        lb.Request,
        lambda m: msgspec.json.encode(lb.RequestEnvelope(request=m)),
    ),
    "lobby_event": (
        _lobby_event,
        lb.Event,
        lambda m: msgspec.json.encode(lb.LobbyEnvelope(event=m)),
    ),
    "rating": (decode_result, RatedHandResult, encode_result),
    "frame": (proto.decode_client, proto.ClientFrame, lambda m: proto.encode(m).encode()),
}


def _isinstance(value: object, kinds: Any) -> bool:
    if isinstance(kinds, tuple):
        return isinstance(value, kinds)
    return isinstance(value, getattr(kinds, "__args__", (kinds,)))


def decode_all(raw: str | bytes) -> int:
    """Feed ``raw`` to every decoder; return how many accepted it."""
    fuzz_tally.add("decoder_inputs")
    accepted = 0
    as_bytes = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    for name, (decoder, kinds, encode) in DECODERS.items():
        text_ok = name == "frame"  # only the socket decoder takes text
        try:
            value = decoder(raw if text_ok else as_bytes)
        except msgspec.DecodeError as exc:
            assert str(exc), name
            continue
        assert _isinstance(value, kinds), (name, value)
        assert decoder(encode(value)) == value, (name, value)
        accepted += 1
    try:
        gateway_command(raw)
    except msgspec.DecodeError:
        pass
    else:
        accepted += 1
    return accepted


# --- a corpus of valid messages of every type -------------------------------------------------


def _corpus() -> list[dict[str, Any]]:
    rng = random.Random(7)
    out: list[dict[str, Any]] = []
    events: list[Any] = []
    commands: list[cmd.HandCommand] = []
    for i, clock in enumerate((None, *PRESETS)):
        state, hand, now = deal(rng, f"corpus#{i}", clock)
        while state.phase != "ended":
            seat = rng.choice(pending_seats(state))
            commands.extend(legal_actions(state, seat)[:2])
            now += rng.choice((0, 1_500, 70_000))
            hand += play_step(rng, state, now)
        events += hand
    for i in range(12):
        events += play_random_hand(random.Random(i), eager=True, timeout_rate=0.05)[1]
    events += play_random_hand(random.Random(12), eager=True, pause_rate=0.2)[1]  # practice
    commands.append(cmd.Timeout(seat=2, decision_seq=7, hand_id="t#1"))
    commands += [cmd.Pause(seat=0, hand_id="t#1"), cmd.Resume(seat=0, hand_id="t#1")]
    # Robbing windows are rare in random play: one written out.
    events.append(
        ev.RobbingWindowOpened(
            table_id="t", hand_id="t#1", seq=40, declarer=1, tile="5m", seats=[2, 3]
        )
    )
    by_type: dict[str, Any] = {}
    for e in events:  # a few of each type
        kept = by_type.setdefault(type(e).__name__, [])
        if len(kept) < 4:
            kept.append(e)
    out += [msgspec.to_builtins(EventEnvelope(event=e)) for kept in by_type.values() for e in kept]
    by_kind: dict[str, list[cmd.HandCommand]] = {}
    for c in commands:
        kept_commands = by_kind.setdefault(type(c).__name__, [])
        if len(kept_commands) < 3:
            kept_commands.append(c)
    commands = [c for kept in by_kind.values() for c in kept]
    out += [msgspec.to_builtins(CommandEnvelope(command=c)) for c in commands]
    start = StartHand(table_id="t", players=list("abcd"), clock="blitz", computer_seats=[1, 2])
    out.append(msgspec.to_builtins(CommandEnvelope(command=start)))
    options = lb.TableOptions(rated=False, clock=None, public=False, computers="easy")
    requests: list[lb.Request] = [
        lb.CreateTable(player="p-1", request_id="r1", options=options),
        lb.JoinTable(player="p-2", request_id="r2", table_id="t", code="abc"),
        lb.LeaveTable(player="p-2", request_id="r3", table_id="t"),
        lb.FillWithComputers(player="p-1", request_id="r4", table_id="t"),
        lb.JoinQueue(player="p-3", request_id="r5", rating=1612.5, computers_after_s=30),
        lb.LeaveQueue(player="p-3", request_id="r6"),
        lb.TableFinished(
            player="table-service",
            request_id="r7",
            table_id="t",
            hand_id="t#1",
            players=["p-1", "c:1", "c:2", "p-2"],
            points=[8, -4, -4, 0],
        ),
        lb.PlayAgain(player="p-1", request_id="r8", table_id="t"),
        lb.ArriveAtTable(player="p-1", request_id="r9", table_id="t"),
        lb.PlayerWon(
            player="table-service", request_id="r10", table_id="t", hand_id="h", winner="p-1"
        ),
    ]
    out += [msgspec.to_builtins(lb.RequestEnvelope(request=r)) for r in requests]
    lobby_events: list[lb.Event] = [
        lb.TableOpened(table_id="t", creator="p-1", options=options, code="abc"),
        lb.SeatTaken(table_id="t", player="p-2"),
        lb.SeatLeft(table_id="t", player="p-2"),
        lb.TableStarted(
            table_id="t",
            players=["p-1", "c:1", "c:2", "p-2"],
            computer_seats=[1, 2],
            rated=False,
            clock=None,
        ),
        lb.TableFound(
            table_id="t",
            players=["p-1", "c:1", "c:2", "p-2"],
            computer_seats=[1, 2],
            rated=False,
            clock=None,
            deal_by_ms=10_000,
            present=["p-1"],
        ),
        lb.PlayerArrived(table_id="t", player="p-2"),
        lb.PlayerDone(table_id="t", player="p-2"),
        lb.SeatLeaving(table_id="t", player="p-1"),
        lb.HandFinished(table_id="t", hand_id="t#1", points={"p-1": 8, "p-2": 0}),
        lb.PlayAgainPressed(table_id="t", player="p-1"),
        lb.TableReopened(table_id="t"),
        lb.TableClosed(table_id="t", reason="finished"),
        lb.QueueJoined(player="p-3", rating=1500.0, computers_after_s=None),
        lb.QueueLeft(player="p-3", matched_table="t"),
    ]
    out += [msgspec.to_builtins(lb.LobbyEnvelope(event=e)) for e in lobby_events]
    out.append(
        msgspec.to_builtins(
            RatedHandResult(
                hand_id="t#1",
                table_id="t",
                players=["a", "b", "c", "d"],
                points=[3, -1, -1, -1],
                rated=True,
                clock="standard",
            )
        )
    )
    frames: list[msgspec.Struct] = [
        proto.Hello(token="tok", table_id="t", hand_id="t#1", last_seq=12),
        proto.Ping(t=12.5),
    ]
    for c in commands[::2]:
        body = msgspec.to_builtins(c)
        for key in FILLED_BY_GATEWAY:
            body.pop(key, None)
        frames.append(proto.CommandFrame(command_id="c-1", body=body, decision_seq=3))
    out += [msgspec.to_builtins(f) for f in frames]
    return out


CORPUS = _corpus()


def test_the_corpus_is_valid_and_covers_every_message_type() -> None:
    accepted = [decode_all(json.dumps(m).encode()) for m in CORPUS]
    assert all(n >= 1 for n in accepted)
    tags = {m.get("type") for m in CORPUS} | {
        inner.get("type")
        for m in CORPUS
        for key in ("event", "command", "request")
        if isinstance(inner := m.get(key), dict)
    }
    for union in (Event, lb.Request, lb.Event, proto.ClientFrame):
        for kind in union.__args__:
            assert kind.__struct_config__.tag in tags, kind
    for kind in cmd.COMMAND_TYPES:
        assert kind.__struct_config__.tag in tags, kind


# --- Hypothesis: bytes, JSON, near-valid ------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["5m", "hand_started", "discard", "hello", "command", "", "type"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=24,
)
tags = st.sampled_from(jsonfuzz.TAGS)
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=64)


@settings(max_examples=2000 * EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=256), texts))
def test_arbitrary_bytes_and_text(raw: bytes | str) -> None:
    decode_all(raw)


@settings(max_examples=600 * EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.one_of(st.none(), tags), st.booleans())
def test_arbitrary_json(value: Any, tag: str | None, wrap: bool) -> None:
    if tag is not None and isinstance(value, dict):
        value = {**value, "type": tag}
    if wrap:
        value = {"command": value, "event": value, "request": value, "v": 1, **_dict(value)}
    decode_all(json.dumps(value).encode())


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@st.composite
def near_valid(draw: st.DrawFn) -> Any:
    """A valid message with one to three things wrong with it."""
    message = copy.deepcopy(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(1, 3))):
        places = jsonfuzz.places(message, [])
        if not places:
            break
        container, key = draw(st.sampled_from(places))
        how = draw(st.sampled_from(("drop", "replace", "retag", "add", "wrap", "null", "v")))
        if how == "drop":
            del container[key]
        elif how == "replace":
            container[key] = draw(json_values)
        elif how == "retag" and isinstance(container, dict):
            container["type"] = draw(tags)
        elif how == "add" and isinstance(container, dict):
            container[draw(st.text(max_size=8))] = draw(json_values)
        elif how == "wrap":
            container[key] = [container[key]]
        elif how == "null":
            container[key] = None
        elif how == "v" and isinstance(message, dict):
            message["v"] = draw(st.one_of(st.integers(), st.just(2), st.just(0)))
    return message


@settings(max_examples=800 * EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid())
def test_near_valid_messages(message: Any) -> None:
    decode_all(json.dumps(message).encode())


# --- seeded bulk: valid encodings mangled byte by byte ---------------------------------------


def test_twenty_thousand_spoiled_messages() -> None:
    rng = random.Random(5)
    accepted = 0
    for _ in range(BULK):
        accepted += bool(decode_all(json.dumps(jsonfuzz.spoil(rng, rng.choice(CORPUS))).encode()))
    assert 0 < accepted < BULK


def test_twenty_thousand_mangled_encodings() -> None:
    rng = random.Random(11)
    encoded = [json.dumps(m).encode() for m in CORPUS]
    accepted = 0
    for _ in range(BULK):
        accepted += bool(decode_all(jsonfuzz.mangle(rng, rng.choice(encoded))))
    assert 0 < accepted < BULK  # some flips still decode (a digit), most do not


@pytest.mark.parametrize("depth", [64, 500, 1_000, 5_000, 100_000])
def test_deep_nesting_is_a_decode_error_not_a_crash(depth: int) -> None:
    deep = "[" * depth + "]" * depth
    for raw in (
        deep,
        '{"x": ' + deep + ', "command": {"type": "pass", "seat": 0}, "v": 1}',
        '{"type": "command", "command_id": "c", "body": {"a": ' + deep + "}}",
        '{"type": "hello", "token": "t", "table_id": "t", "z": ' + deep + "}",
        '{"type": "ping", "t": {"a": {"b": ' + deep + "}}}",
    ):
        decode_all(raw)
        decode_all(raw.encode())
