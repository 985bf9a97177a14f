"""Constrained scalar types shared by events and commands."""

from typing import Annotated, Literal

from msgspec import Meta

Tile = Annotated[
    str, Meta(pattern="^[1-9][mps]$", description="a tile: rank 1-9 and suit m, p or s")
]
Suit = Annotated[str, Meta(pattern="^[mps]$", description="a suit: m, p or s")]
Seat = Annotated[int, Meta(ge=0, le=3, description="seat 0-3; seat 0 is the dealer")]
Direction = Literal["left", "opposite", "right"]
