"""Typed events and commands of a Blood Battle hand (msgspec tagged unions).

The published JSON Schema files beside this module are generated from these types
(``mahjong-planet schemas --write``). Evolve them only by adding fields with defaults.
"""

import msgspec

SCHEMA_VERSION = 1


def too_deep(exc: RecursionError) -> msgspec.DecodeError:
    """The ``DecodeError`` for JSON nested deeper than msgspec follows: it raises
    ``RecursionError`` there (even inside a field it would skip), which readers catching
    ``DecodeError`` would not expect, and a log consumer would read such a record again and
    again instead of setting it aside."""
    return msgspec.DecodeError(f"JSON is nested too deeply ({exc})")
