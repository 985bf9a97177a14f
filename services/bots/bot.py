"""The bot API: a seat's view in, one ordinary command out.

``Bot.decide`` takes a ``BotView`` and ``Bot.act`` a ``SeatView``; neither can be given a
``HandState``, so a bot sees only what a human in its seat sees (RULES.md §9, §10). Decisions
are pure: the same view always gives the same command, and pacing is the runner's business
(``services.bots.pace``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from schemas import commands as cmd
from schemas.views import SeatView
from services.bots.botview import BotView, from_seat_view
from services.rules import INDEX, NAMES, SUITS


@dataclass(slots=True)
class Choices:
    """The legal actions of a view, sorted by kind (from ``BotView.legal``)."""

    hu: bool = False
    pung: bool = False
    claim_kong: bool = False
    kongs: list[int] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)


def choices(view: BotView) -> Choices:
    """What the seat may do now, read from its legal actions."""
    out = Choices()
    for c in view.legal:
        if isinstance(c, cmd.Discard):
            out.discards.append(INDEX[c.tile])
        elif isinstance(c, cmd.Hu):
            out.hu = True
        elif isinstance(c, cmd.Pung):
            out.pung = True
        elif isinstance(c, cmd.ClaimKong):
            out.claim_kong = True
        elif isinstance(c, cmd.Kong):
            out.kongs.append(INDEX[c.tile])
    return out


class Bot(ABC):
    """A computer player of one strength. Subclasses implement the four kinds of decision."""

    strength: ClassVar[str]

    def act(self, view: SeatView) -> cmd.HandCommand:
        """The command for a seat's pending decision, from its ``SeatView``."""
        return self.decide(from_seat_view(view))

    def decide(self, view: BotView) -> cmd.HandCommand:
        """The command for the seat's pending decision.

        Opening decisions need no list of legal actions (any three held tiles of one suit,
        any suit), so a runner may leave ``view.legal`` empty then; in play it must be set.
        """
        seat = view.seat
        if view.phase == "exchange" and view.exchange_chosen is None:
            return cmd.ChooseExchange(seat=seat, tiles=[NAMES[t] for t in self.exchange(view)])
        if view.phase == "missing" and view.missing[seat] is None:
            return cmd.DeclareMissing(seat=seat, suit=SUITS[self.missing_suit(view)])
        if view.phase != "play" or not view.legal:
            raise ValueError(f"seat {seat} has no decision pending")
        options = choices(view)
        if view.window is not None:
            return self.respond(view, options)
        return self.turn(view, options)

    @abstractmethod
    def exchange(self, view: BotView) -> list[int]:
        """The three tiles (of one suit) to pass."""

    @abstractmethod
    def missing_suit(self, view: BotView) -> int:
        """The suit (0=m, 1=p, 2=s) to declare missing."""

    @abstractmethod
    def respond(self, view: BotView, options: Choices) -> cmd.HandCommand:
        """Answer an open response or robbing window: hu, pung, claim_kong or pass."""

    @abstractmethod
    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        """Act on one's turn: hu, kong or discard."""


def hu(view: BotView) -> cmd.HandCommand:
    """A win (self-drawn on one's turn, or on the window's tile)."""
    return cmd.Hu(seat=view.seat)


def passing(view: BotView) -> cmd.HandCommand:
    """Decline the window's claims."""
    return cmd.Pass(seat=view.seat)


def pung(view: BotView) -> cmd.HandCommand:
    """Claim the window's discard for a pung."""
    return cmd.Pung(seat=view.seat)


def claim_kong(view: BotView) -> cmd.HandCommand:
    """Claim the window's discard for an exposed kong."""
    return cmd.ClaimKong(seat=view.seat)


def discard(view: BotView, t: int) -> cmd.HandCommand:
    """Discard tile ``t``."""
    return cmd.Discard(seat=view.seat, tile=NAMES[t])


def kong(view: BotView, t: int) -> cmd.HandCommand:
    """Declare a concealed or added kong of ``t`` on one's turn."""
    return cmd.Kong(seat=view.seat, tile=NAMES[t])


def suit_tiles(hand: list[int], suit: int) -> list[int]:
    """The tiles of one suit in a hand, sorted, one entry per copy."""
    return [t for t in range(suit * 9, suit * 9 + 9) for _ in range(hand[t])]


def suit_sizes(hand: list[int]) -> list[int]:
    """How many tiles of each suit a hand holds."""
    return [sum(hand[s * 9 : s * 9 + 9]) for s in range(3)]
