"""Constrained scalar types shared by events, commands, requests and results.

Ids are checked where records are decoded, so a record that no store or rule could take
(a NUL in a name, a number beyond what a column holds) is refused there with a reason,
before it can fail a transaction again and again (issue 17).
"""

from typing import Annotated, Literal

from msgspec import Meta

Tile = Annotated[
    str, Meta(pattern="^[1-9][mps]$", description="a tile: rank 1-9 and suit m, p or s")
]
Suit = Annotated[str, Meta(pattern="^[mps]$", description="a suit: m, p or s")]
Seat = Annotated[int, Meta(ge=0, le=3, description="seat 0-3; seat 0 is the dealer")]
Direction = Literal["left", "opposite", "right"]

NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
"""No control characters (NUL, newlines, escapes): what PostgreSQL text, log lines and
the web client can all hold."""

COMPUTER_PREFIX = "computer:"
"""How a computer seat's player id begins: ``computer:<strength>:<n>`` (accounts cannot take
such a name); the one place the prefix is written."""

PlayerId = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=64,
        pattern=NO_CONTROL,
        description="a player: an account id or computer:<strength>:<n>; 1-64 characters, "
        "no control characters",
    ),
]
Ref = Annotated[
    str,
    Meta(
        max_length=128,
        pattern=NO_CONTROL,
        description="an id (table, hand, command, request); at most 128 characters, no "
        "control characters",
    ),
]
RequiredRef = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=128,
        pattern=NO_CONTROL,
        description="an id that must be given; 1-128 characters, no control characters",
    ),
]
Name = Annotated[
    str,
    Meta(max_length=64, pattern=NO_CONTROL, description="a short name: preset, variant, clock"),
]
Count = Annotated[int, Meta(ge=0, le=2**31 - 1, description="a count or seq within int32")]
TimeMs = Annotated[int, Meta(ge=0, le=2**53, description="Unix time in ms")]
