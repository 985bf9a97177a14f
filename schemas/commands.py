"""Commands a seat (or the clock) sends to a hand, and the rejection it may get back."""

from __future__ import annotations

import typing
from typing import Annotated

import msgspec
from msgspec import Meta

from schemas.codes import RuleCode
from schemas.types import Count, Ref, Seat, Suit, Tile


class HandCommand(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Fields every command carries.

    ``command_id`` lets services drop duplicates. ``hand_id`` and ``decision_seq`` name the
    decision the command answers (``decision_seq`` is the seq of the event that opened it);
    a command for an older hand or decision is stale and rejected. Left empty, they are not
    checked (the rules engine's own callers, scenarios).
    """

    seat: Seat
    table_id: Ref = ""
    command_id: Ref = ""
    hand_id: Ref = ""
    decision_seq: Count | None = None


class ChooseExchange(HandCommand, frozen=True, tag="choose_exchange"):
    """Set aside three tiles of one suit to pass (RULES.md §2)."""

    tiles: Annotated[list[Tile], Meta(max_length=14)]  # three; more is refused by rule


class DeclareMissing(HandCommand, frozen=True, tag="declare_missing"):
    """Declare the missing suit (ding que)."""

    suit: Suit


class Discard(HandCommand, frozen=True, tag="discard"):
    """Discard a concealed tile on one's turn."""

    tile: Tile


class Kong(HandCommand, frozen=True, tag="kong"):
    """On one's turn: a concealed kong of four held tiles, or an added kong onto one's pung."""

    tile: Tile


class Hu(HandCommand, frozen=True, tag="hu"):
    """Win: self-drawn on one's turn, or on the tile of an open response/robbing window."""


class Pung(HandCommand, frozen=True, tag="pung"):
    """Claim the discard of the open response window for a pung."""


class ClaimKong(HandCommand, frozen=True, tag="claim_kong"):
    """Claim the discard of the open response window for an exposed kong."""


class Pass(HandCommand, frozen=True, tag="pass"):
    """Decline every claim in the open window."""


class Timeout(HandCommand, frozen=True, tag="timeout"):
    """The seat's pending decision ran out of time; the RULES.md §8 default is played for it.

    Sent by the clock, which names the decision (``decision_seq``) that ran out.
    """


class Pause(HandCommand, frozen=True, tag="pause"):
    """Pause an untimed practice hand: no seat decides until ``resume`` (RULES.md §9,
    docs/rules-decisions.md). Names the hand, not a decision: ``decision_seq`` is not checked,
    and pausing leaves the pending decision as it is."""


class Resume(HandCommand, frozen=True, tag="resume"):
    """Continue a paused practice hand exactly where it stopped (the same pending decision)."""


Command = (
    ChooseExchange
    | DeclareMissing
    | Discard
    | Kong
    | Hu
    | Pung
    | ClaimKong
    | Pass
    | Timeout
    | Pause
    | Resume
)

COMMAND_TYPES: tuple[type[HandCommand], ...] = typing.get_args(Command)
"""Every command type, in the order of ``Command`` (the one list of them)."""


class Rejection(msgspec.Struct, frozen=True, kw_only=True):
    """Why a command was refused: a stable ``code`` with ``params`` and an English ``reason``.

    Clients translate by code; the reason is for logs and tests.
    """

    code: RuleCode
    reason: str
    params: dict[str, str | int] = {}
