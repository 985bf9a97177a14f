"""Random, near-valid and invalid hand commands for the rules engine fuzzers.

``random_command`` draws from a seeded ``random.Random`` (the bulk runs); ``command_strategy``
is the same space as a Hypothesis strategy (the structured runs, which shrink a failure to
a small case). Commands are built the way msgspec would hand them to the engine, so every
field has its declared Python type, but any *value*: seats out of range, tiles that are not
tiles (or not held), three-tile exchanges of two suits, stale hand ids and decision seqs,
and every command type in every phase. A share are legal actions with one field spoiled,
the near misses most likely to slip through a check.

``check_rejection`` is what every refusal must look like: a ``Rejection`` with a stable code
from the engine's catalogue (``CODES``, its closed set in ``schemas/codes.py``), a non-empty
reason and string or int params.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas.codes import RuleCode, members
from services.rules.hand import legal_actions
from services.rules.state import HandState, pending_seats
from services.rules.tiles import NAMES

ROOT = Path(__file__).resolve().parents[2]
TYPES: tuple[type[cmd.HandCommand], ...] = cmd.COMMAND_TYPES

GARBAGE_TILES = (
    "",
    "0m",
    "10m",
    "5z",
    "m5",
    "5M",
    " 5m",
    "5m ",
    "5m\x00",
    "🀄",
    "5",
    "mm",
    "1p1p",
    "9",
    "-1s",
    "x" * 300,
)
GARBAGE_SUITS = ("", "x", "M", "mp", "z", " m", "1", "🀄")
BAD_SEATS = (-1, 4, 5, 7, 100, -100, 2**31, -(2**63))
STALE_HANDS = ("other#1", "fuzz#0", "#", "x" * 200)


CODES = members(RuleCode)
"""Every rejection code the rules engine can give: its closed set in ``schemas/codes.py``."""
CODE_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def check_rejection(result: object) -> str:
    """``result`` is a clean refusal: returns its code."""
    assert isinstance(result, cmd.Rejection), result
    assert isinstance(result.code, str) and CODE_RE.match(result.code), result
    assert result.code in CODES, f"code not in the catalogue: {result}"
    assert isinstance(result.reason, str) and result.reason.strip(), result
    assert isinstance(result.params, dict), result
    for key, value in result.params.items():
        assert isinstance(key, str) and type(value) in (str, int), result
    # It travels on the log as a CommandRejected: it must encode.
    msgspec.json.encode(result)
    return result.code


# --- seeded generation ------------------------------------------------------------------------


def _tile(rng: random.Random, state: HandState, seat: int) -> str:
    r = rng.random()
    if r < 0.45 and 0 <= seat <= 3:
        held = [NAMES[t] for t in range(27) if state.counts[seat][t]]
        if held:
            return rng.choice(held)
    if r < 0.8:
        return rng.choice(NAMES)
    return rng.choice(GARBAGE_TILES)


def _exchange_tiles(rng: random.Random, state: HandState, seat: int) -> list[str]:
    r = rng.random()
    if r < 0.35 and 0 <= seat <= 3:  # three held tiles, often of one suit, sometimes not
        held = [NAMES[t] for t in range(27) for _ in range(state.counts[seat][t])]
        if len(held) >= 3:
            if rng.random() < 0.5:
                suit = rng.choice("mps")
                same = [t for t in held if t[1] == suit]
                if len(same) >= 3:
                    return rng.sample(same, 3)
            return rng.sample(held, 3)
    n = rng.choice((0, 1, 2, 3, 3, 3, 4, 5))
    return [_tile(rng, state, seat) for _ in range(n)]


def _seat(rng: random.Random, state: HandState) -> int:
    r = rng.random()
    if r < 0.4:
        pending = pending_seats(state)
        if pending:
            return rng.choice(pending)
    if r < 0.85:
        return rng.randrange(4)
    return rng.choice(BAD_SEATS)


def _decision_seq(rng: random.Random, state: HandState) -> int | None:
    r = rng.random()
    if r < 0.45:
        return None
    if r < 0.7:
        return state.decision_seq
    if r < 0.85:
        return state.decision_seq + rng.choice((-2, -1, 1, 2))
    return rng.choice((-1, 0, 2**31, -(2**40), rng.randrange(-5, state.seq + 50)))


def _hand_id(rng: random.Random, state: HandState) -> str:
    r = rng.random()
    if r < 0.7:
        return ""
    if r < 0.85:
        return state.hand_id
    return rng.choice((*STALE_HANDS, state.hand_id + "x"))


def random_command(rng: random.Random, state: HandState) -> cmd.HandCommand:
    """One command for ``state``: random, near-valid or a legal one with a field spoiled."""
    if rng.random() < 0.25:
        pending = pending_seats(state)
        if pending:
            options = legal_actions(state, rng.choice(pending))
            if options:
                legal = rng.choice(options)
                return _spoil(rng, state, legal)
    kind = rng.choice(TYPES)
    seat = _seat(rng, state)
    common: dict[str, Any] = {
        "seat": seat,
        "hand_id": _hand_id(rng, state),
        "decision_seq": _decision_seq(rng, state),
        "command_id": rng.choice(("", f"fuzz-{rng.randrange(10**6)}")),
        "table_id": rng.choice(("", state.table_id, "elsewhere")),
    }
    if kind is cmd.ChooseExchange:
        return cmd.ChooseExchange(tiles=_exchange_tiles(rng, state, seat), **common)
    if kind is cmd.DeclareMissing:
        suit = rng.choice("mps") if rng.random() < 0.8 else rng.choice(GARBAGE_SUITS)
        return cmd.DeclareMissing(suit=suit, **common)
    if kind is cmd.Discard or kind is cmd.Kong:
        return kind(tile=_tile(rng, state, seat), **common)  # type: ignore[call-arg]
    return kind(**common)


def _spoil(rng: random.Random, state: HandState, legal: cmd.HandCommand) -> cmd.HandCommand:
    """A legal command with one field changed (or, now and then, left as it is)."""
    r = rng.random()
    if r < 0.2:
        return msgspec.structs.replace(legal, seat=(legal.seat + rng.randrange(1, 4)) % 4)
    if r < 0.4:
        stale = state.decision_seq + rng.choice((-3, -1, 1))
        return msgspec.structs.replace(legal, decision_seq=stale)
    if r < 0.55:
        return msgspec.structs.replace(legal, hand_id=rng.choice(STALE_HANDS))
    if r < 0.7 and isinstance(legal, cmd.Discard | cmd.Kong):
        return msgspec.structs.replace(legal, tile=rng.choice((*GARBAGE_TILES, *NAMES)))
    if r < 0.8 and isinstance(legal, cmd.ChooseExchange):
        tiles = list(legal.tiles)
        tiles[rng.randrange(3)] = rng.choice((*GARBAGE_TILES, *NAMES))
        return msgspec.structs.replace(legal, tiles=tiles)
    if r < 0.9:
        return msgspec.structs.replace(legal, seat=rng.choice(BAD_SEATS))
    return msgspec.structs.replace(
        legal, decision_seq=state.decision_seq, hand_id=state.hand_id
    )  # valid: accepted


# --- the same space for Hypothesis ------------------------------------------------------------

tile_text = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(GARBAGE_TILES),
    st.from_regex(r"\A[0-9][a-z]\Z"),
    st.text(max_size=6),
)
seat_number = st.one_of(st.integers(0, 3), st.integers(-(2**63), 2**63 - 1))
decision = st.one_of(st.none(), st.integers(-3, 400), st.integers())


@st.composite
def command_strategy(draw: st.DrawFn) -> cmd.HandCommand:
    """Any command: every type, any seat number, tile text, suit text and decision."""
    kind = draw(st.sampled_from(TYPES))
    common: dict[str, Any] = {
        "seat": draw(seat_number),
        "hand_id": draw(st.one_of(st.just(""), st.just("fuzz#1"), st.text(max_size=8))),
        "decision_seq": draw(decision),
        "command_id": draw(st.text(max_size=8)),
    }
    if kind is cmd.ChooseExchange:
        return cmd.ChooseExchange(tiles=draw(st.lists(tile_text, max_size=5)), **common)
    if kind is cmd.DeclareMissing:
        suit = draw(st.one_of(st.sampled_from("mps"), st.text(max_size=3)))
        return cmd.DeclareMissing(suit=suit, **common)
    if kind is cmd.Discard or kind is cmd.Kong:
        return kind(tile=draw(tile_text), **common)  # type: ignore[call-arg]
    return kind(**common)
