"""The published JSON Schemas: generated from the code, and evolved only compatibly."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from schemas import commands as cmd
from schemas import events as ev
from schemas import publish


def _defs(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema.get("$defs", {}))


BOUNDS = frozenset(
    {"minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems"}
)
"""Keywords a field may gain: bounds of values no service could ever apply (issue 17: points
beyond int32, NUL in a player id), refused at decoding instead of failing a store."""


def _unbounded(spec: Any) -> Any:
    if isinstance(spec, dict):
        return {k: _unbounded(v) for k, v in spec.items() if k not in BOUNDS | {"description"}}
    if isinstance(spec, list):
        return [_unbounded(v) for v in spec]
    return spec


def incompatibilities(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Why ``new`` cannot read or write what ``old`` described; empty when compatible.

    Allowed: new types, new optional fields, bounds added to a field (``BOUNDS``). Refused:
    a type or field removed, a field's schema otherwise changed, a field newly required.
    """
    problems = []
    old_defs, new_defs = _defs(old), _defs(new)
    for name, old_def in old_defs.items():
        new_def = new_defs.get(name)
        if new_def is None:
            problems.append(f"{name}: type removed")
            continue
        old_props = old_def.get("properties", {})
        new_props = new_def.get("properties", {})
        for field, spec in old_props.items():
            if field not in new_props:
                problems.append(f"{name}.{field}: field removed")
            elif _unbounded(new_props[field]) != _unbounded(spec):
                problems.append(f"{name}.{field}: schema changed")
        added_required = set(new_def.get("required", [])) - set(old_def.get("required", []))
        problems.extend(f"{name}.{f}: newly required" for f in sorted(added_required))
    return problems


@pytest.mark.parametrize("name", sorted(publish.PUBLISHED))
def test_published_schema_is_compatible_with_the_code(name: str) -> None:
    published = json.loads((publish.HERE / name).read_text())
    current = publish.generate(publish.PUBLISHED[name])
    assert incompatibilities(published, current) == []


def test_a_changed_field_type_is_still_incompatible() -> None:
    old = {"$defs": {"T": {"properties": {"n": {"type": "integer"}}}}}
    bounded = {"$defs": {"T": {"properties": {"n": {"type": "integer", "maximum": 9}}}}}
    retyped = {"$defs": {"T": {"properties": {"n": {"type": "string"}}}}}
    assert incompatibilities(old, bounded) == []
    assert incompatibilities(old, retyped) == ["T.n: schema changed"]


@pytest.mark.parametrize("name", sorted(publish.PUBLISHED))
def test_published_schema_is_up_to_date(name: str) -> None:
    assert (publish.HERE / name).read_text() == publish.render(publish.PUBLISHED[name]), (
        "run `make schemas` and commit the result"
    )


def _won_schema() -> dict[str, Any]:
    return json.loads((publish.HERE / "events.schema.json").read_text())


def test_adding_a_field_with_a_default_is_compatible() -> None:
    old = _won_schema()
    new = json.loads(json.dumps(old))
    new["$defs"]["Won"]["properties"]["clock_ms"] = {"type": "integer", "default": 0}
    assert incompatibilities(old, new) == []


def test_a_new_required_field_is_incompatible() -> None:
    old = _won_schema()
    new = json.loads(json.dumps(old))
    new["$defs"]["Won"]["properties"]["clock_ms"] = {"type": "integer"}
    new["$defs"]["Won"]["required"].append("clock_ms")
    assert incompatibilities(old, new) == ["Won.clock_ms: newly required"]


def test_removing_or_retyping_a_field_is_incompatible() -> None:
    old = _won_schema()
    new = json.loads(json.dumps(old))
    del new["$defs"]["Won"]["properties"]["fan"]
    new["$defs"]["Won"]["properties"]["value"] = {"type": "string"}
    assert incompatibilities(old, new) == ["Won.fan: field removed", "Won.value: schema changed"]


def test_every_event_carries_table_hand_and_sequence() -> None:
    for kind in ev.EVENT_TYPES:
        fields = set(kind.__struct_fields__)
        assert {"table_id", "hand_id", "seq"} <= fields, kind.__name__


def test_events_round_trip_through_json_as_a_tagged_union() -> None:
    e = ev.Won(
        table_id="t",
        hand_id="h",
        seq=9,
        seat=1,
        tile="9p",
        from_seat=0,
        self_drawn=False,
        fan=2,
        value=4,
        patterns=["pure_suit"],
        hand=["9p"],
        payments=[ev.Payment(payer=0, payee=1, amount=4, reason="discard_win")],
    )
    raw = msgspec.json.encode(e)
    assert json.loads(raw)["type"] == "won"
    assert msgspec.json.decode(raw, type=ev.Event) == e


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": "discard", "seat": 1, "tile": "0m"}',
        b'{"type": "discard", "seat": 7, "tile": "5m"}',
        b'{"type": "discard", "seat": 1}',
        b'{"type": "fly", "seat": 1}',
        b'{"type": "declare_missing", "seat": 1, "suit": "z"}',
        b"not json",
    ],
)
def test_malformed_commands_are_refused_at_decoding(raw: bytes) -> None:
    with pytest.raises(msgspec.ValidationError if raw != b"not json" else msgspec.DecodeError):
        msgspec.json.decode(raw, type=cmd.Command)


def test_events_are_frozen() -> None:
    e = ev.Passed(table_id="t", hand_id="h", seq=1, seat=2)
    with pytest.raises(AttributeError):
        e.seat = 3  # type: ignore[misc]


def test_the_tagged_unions_are_the_one_list_of_their_types() -> None:
    """``EVENT_TYPES`` and ``COMMAND_TYPES`` are read from the unions, tags unique."""
    assert typing.get_args(ev.Event) == ev.EVENT_TYPES and len(ev.EVENT_TYPES) > 20
    assert typing.get_args(cmd.Command) == cmd.COMMAND_TYPES and len(cmd.COMMAND_TYPES) > 10
    for kinds in (ev.EVENT_TYPES, cmd.COMMAND_TYPES):
        tags = [kind.__struct_config__.tag for kind in kinds]
        assert len(tags) == len(set(tags))


def test_the_readme_lists_every_event_type() -> None:
    """The README's table of events names each event type, and no other."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme.split("| event | meaning | seen by |", 1)[1].split("\n\n", 1)[0]
    named = re.findall(r"`([a-z_]+)`", "\n".join(r.split("|")[1] for r in table.splitlines()[2:]))
    assert sorted(named) == sorted(k.__struct_config__.tag for k in ev.EVENT_TYPES)
