"""Typed events and commands of a Blood Battle hand (msgspec tagged unions).

The published JSON Schema files beside this module are generated from these types
(``mahjong-planet schemas --write``). Evolve them only by adding fields with defaults.
"""

from typing import Protocol, TypeVar

import msgspec

SCHEMA_VERSION = 1


class Versioned(Protocol):
    """A record that says which schema version wrote it."""

    @property
    def v(self) -> int: ...


_T = TypeVar("_T")
_V = TypeVar("_V", bound=Versioned)


def too_deep(exc: RecursionError) -> msgspec.DecodeError:
    """The ``DecodeError`` for JSON nested deeper than msgspec follows: it raises
    ``RecursionError`` there (even inside a field it would skip), which readers catching
    ``DecodeError`` would not expect, and a log consumer would read such a record again and
    again instead of setting it aside."""
    return msgspec.DecodeError(f"JSON is nested too deeply ({exc})")


def decode_with(decoder: msgspec.json.Decoder[_T], raw: bytes) -> _T:
    """``decoder.decode(raw)``, raising only ``msgspec.DecodeError`` (see ``too_deep``)."""
    try:
        return decoder.decode(raw)
    except RecursionError as exc:
        raise too_deep(exc) from None


def decode_current(decoder: msgspec.json.Decoder[_V], raw: bytes) -> _V:
    """``decode_with``, and a ``msgspec.ValidationError`` for a record written by a newer
    schema version than this code's (it may hold what this code cannot read)."""
    record = decode_with(decoder, raw)
    if record.v > SCHEMA_VERSION:
        raise msgspec.ValidationError(f"schema version {record.v} is newer than {SCHEMA_VERSION}")
    return record
