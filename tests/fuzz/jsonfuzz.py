"""Seeded generators of broken JSON and bytes, shared by the decoder and socket fuzzers."""

from __future__ import annotations

import copy
import random
from typing import Any

from schemas import lobby as lb
from schemas.commands import Command
from schemas.events import Event
from services.gateway import protocol as proto

TAGS = sorted(
    {
        str(k.__struct_config__.tag)
        for u in (Event, Command, lb.Request, lb.Event, proto.ClientFrame)
        for k in u.__args__
    }
    | {"start_hand", "fly", "", "Discard", "hidden", "welcome"}
)


def places(node: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON document."""
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((node, k))
            places(v, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((node, i))
            places(v, out)
    return out


def mangle(rng: random.Random, raw: bytes) -> bytes:
    """Bytes cut, flipped, spliced with random bytes or JSON punctuation."""
    data = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(data) + 1)
        how = rng.randrange(5)
        if how == 0:
            del data[i:]
        elif how == 1 and i < len(data):
            data[i] = rng.randrange(256)
        elif how == 2:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        elif how == 3:
            data[i:i] = rng.choice((b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\u", b"\xff"))
        else:
            j = rng.randrange(len(data) + 1)
            data[i:j] = b""
    return bytes(data)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """A small JSON value, odd numbers and strings favoured."""
    r = rng.random()
    if depth > 3 or r < 0.55:
        return rng.choice(
            (
                None,
                True,
                False,
                0,
                -1,
                7,
                2**63,
                -(2**64),
                1.5,
                -0.0,
                1e300,
                "",
                "5m",
                "x" * rng.randrange(40),
                "\u0000",
                "🀄",
                rng.randrange(-(10**6), 10**6),
            )
        )
    if r < 0.8:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(("a", "type", "seat", "v", "")): random_json(rng, depth + 1)}


def spoil(rng: random.Random, message: Any) -> Any:
    """A message with one to three things wrong with it (a field dropped, replaced by
    other JSON, retagged, added, wrapped in a list or nulled)."""
    message = copy.deepcopy(message)
    for _ in range(rng.randint(1, 3)):
        spots = places(message, [])
        if not spots:
            break
        container, key = rng.choice(spots)
        how = rng.randrange(6)
        if how == 0:
            del container[key]
        elif how == 1:
            container[key] = random_json(rng)
        elif how == 2 and isinstance(container, dict):
            container["type"] = rng.choice(TAGS)
        elif how == 3 and isinstance(container, dict):
            container[rng.choice(("zz", "type", "v", "seat"))] = random_json(rng)
        elif how == 4:
            container[key] = [container[key]]
        else:
            container[key] = None
    return message
