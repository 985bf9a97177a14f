"""Conformance scenarios: run one hand with every choice spelled out, report its outcome.

The format is ``../shared/conformance/README.md``'s. This module is pure: it takes the parsed
JSON and returns the outcome; the CLI does the file I/O.
"""

from __future__ import annotations

import json
from typing import Any

from schemas import commands as cmd
from schemas import events as ev
from services.rules.hand import handle, start_hand
from services.rules.shuffle import DIRECTIONS, Deal
from services.rules.state import HandState
from services.rules.tiles import NAMES, TileError, parse_tiles, tile


class ScenarioError(ValueError):
    """The scenario file itself is malformed (not an illegal action)."""


def parse_action(text: str) -> cmd.HandCommand:
    """``"<seat> <verb> [tile]"`` → a command. Raises ValueError when it cannot be read."""
    parts = text.split()
    if len(parts) < 2 or not parts[0].isdigit():
        raise ValueError(f"cannot read action {text!r}")
    seat, verb, args = int(parts[0]), parts[1], parts[2:]
    if verb in ("discard", "kong") and len(args) == 1:
        t = NAMES[tile(args[0])]
        return cmd.Discard(seat=seat, tile=t) if verb == "discard" else cmd.Kong(seat=seat, tile=t)
    if args:
        raise ValueError(f"cannot read action {text!r}")
    simple: dict[str, type[cmd.HandCommand]] = {
        "hu": cmd.Hu,
        "pung": cmd.Pung,
        "kong": cmd.ClaimKong,
        "pass": cmd.Pass,
        "timeout": cmd.Timeout,
    }
    if verb not in simple:
        raise ValueError(f"unknown verb in action {text!r}")
    return simple[verb](seat=seat)


def _deal(scenario: dict[str, Any]) -> Deal:
    try:
        hands = tuple(tuple(parse_tiles(h)) for h in scenario["deal"])
        wall = tuple(parse_tiles(scenario.get("wall", "")))
        direction = scenario["exchange"]["direction"]
    except (KeyError, TypeError, TileError) as exc:
        raise ScenarioError(f"bad deal, wall or exchange: {exc}") from exc
    if len(hands) != 4 or direction not in DIRECTIONS:
        raise ScenarioError("a deal has four hands and a direction left, opposite or right")
    return Deal(hands=hands, wall=wall, direction=direction)


def _opening(state: HandState, scenario: dict[str, Any]) -> list[ev.Event]:
    exchange = scenario["exchange"].get("tiles", [None] * 4)
    missing = scenario.get("missing", [None] * 4)
    steps: list[cmd.HandCommand] = []
    for seat in range(4):
        x = exchange[seat]
        steps.append(
            cmd.Timeout(seat=seat)
            if x is None
            else cmd.ChooseExchange(seat=seat, tiles=x.split() if isinstance(x, str) else x)
        )
    for seat in range(4):
        m = missing[seat]
        steps.append(cmd.Timeout(seat=seat) if m is None else cmd.DeclareMissing(seat=seat, suit=m))
    events: list[ev.Event] = []
    for step in steps:
        result = handle(state, step)
        if isinstance(result, cmd.Rejection):
            raise ScenarioError(f"opening choice of seat {step.seat} refused: {result.reason}")
        events.extend(result)
    return events


def prepare(scenario: dict[str, Any]) -> HandState:
    """The scenario's hand after its deal, exchange and missing suits, before any action."""
    state, _ = start_hand("scenario", str(scenario.get("id", "scenario")), _deal(scenario))
    _opening(state, scenario)
    return state


def played(
    scenario: dict[str, Any], players: list[str] | None = None
) -> tuple[HandState, list[ev.Event]]:
    """The scenario's hand after all its actions, and every event of it from
    ``hand_started`` on (for folds of whole logs). Raises ScenarioError when an action is
    refused."""
    state, events = start_hand(
        "scenario", str(scenario.get("id", "scenario")), _deal(scenario), players=players
    )
    events += _opening(state, scenario)
    for text in scenario.get("actions", []):
        result = handle(state, parse_action(text))
        if isinstance(result, cmd.Rejection):
            raise ScenarioError(f"action {text!r} refused: {result.reason}")
        events.extend(result)
    return state, events


def run(scenario: dict[str, Any]) -> dict[str, Any]:
    """Play a scenario and return its outcome (README's ``end/scores/wins/ready/rejected``)."""
    state = prepare(scenario)
    rejected = None
    for index, text in enumerate(scenario.get("actions", [])):
        try:
            result: Any = handle(state, parse_action(text))
        except ValueError as exc:
            result = cmd.Rejection(code="unreadable_action", reason=str(exc))
        if isinstance(result, cmd.Rejection):
            rejected = {"index": index, "action": text, "reason": result.reason}
            break
    return outcome(state, rejected)


def outcome(state: HandState, rejected: dict[str, Any] | None = None) -> dict[str, Any]:
    """The outcome of a hand's state in the scenario format."""
    out: dict[str, Any] = {
        "end": state.end,
        "scores": list(state.scores),
        "wins": [
            {
                "seat": w.seat,
                "tile": None if w.tile is None else NAMES[w.tile],
                "from": w.from_seat,
                "fan": w.fan,
                "value": w.value,
                "patterns": list(w.patterns),
            }
            for w in state.wins
        ],
        "ready": state.ready,
    }
    if rejected is not None:
        out["rejected"] = rejected
    return out


def first_difference(expect: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """The first key of ``expect`` whose value differs from the outcome, described."""
    for key, want in expect.items():
        got = actual.get(key)
        if key == "rejected" and isinstance(want, dict) and isinstance(got, dict):
            got = {k: got.get(k) for k in want}
        if got != want:
            return f"{key}: expected {_short(want)}, got {_short(got)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 300 else text[:297] + "..."
