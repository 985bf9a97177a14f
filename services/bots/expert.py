"""The expert bot: the strong bot's judgement, checked by playing the options out.

Where a decision matters (see ``ExpertBot``), the expert values each candidate by Monte
Carlo: it samples worlds consistent with its own view (``services.bots.worlds``), plays each
candidate out in every world with four normal bots, and averages its final points. Every
candidate is played in the same worlds (common random numbers), so the differences between
candidates carry far less noise than the values themselves. The strong bot's choice is kept
unless another candidate beats it by ``MARGIN`` points: noise should not undo good judgement.

``option_values`` is the same valuation, for any options; the review of a hand
(``services.analysis``) values a human's options with it. It is deterministic: the worlds
are drawn from a seed derived from the view, so the same view always gets the same values,
and a review of the expert's own decision sees exactly what the expert saw.

docs/bots.md has the measurements behind the figures below.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from itertools import combinations

from schemas import commands as cmd
from schemas import events as ev
from services.bots.bot import Choices, discard, kong
from services.bots.botview import BotView
from services.bots.danger import danger, threats
from services.bots.normal import Efficiency, NormalBot, weakest_three
from services.bots.strong import StrongBot, available
from services.bots.tracker import SeatTracker
from services.bots.worlds import NoWorld, sample_world, seat_views
from services.rules import INDEX, NAMES, SUITS, HandState, handle, legal_actions, pending_seats

WORLDS = 24
"""Worlds per decision the expert plays (each candidate in each)."""
MARGIN = 0.2
"""Points a candidate must gain over the strong bot's choice to replace it."""
NEAR_READY = 1
"""Discards are played out when the best of them leaves the hand this close to ready."""
FOLD_WALL = 30
"""... or, with this many tiles left or fewer, when safety may matter: the safest tile is
then a candidate too."""
CANDIDATES = 4
"""At most this many discards of the lowest shanten are played out (best two-step first)."""
MAX_DECISIONS = 2000
_POLICY = NormalBot()


def _digest(view: BotView) -> int:
    """A stable seed from everything the view shows (not ``hash``: it changes per process)."""
    facts = (
        view.seat,
        view.hand_id,
        view.phase,
        view.hand,
        view.drawn,
        view.exchange_chosen,
        view.exchange_received,
        view.direction,
        view.missing,
        view.concealed,
        [[(m.kind, m.tile, m.from_seat) for m in ms] for ms in view.melds],
        view.discards,
        view.won,
        view.scores,
        view.wall_left,
        view.turn,
        view.window,
    )
    return int.from_bytes(hashlib.blake2b(repr(facts).encode(), digest_size=8).digest(), "big")


def all_options(view: BotView) -> list[cmd.HandCommand]:
    """Every legal option of the seat's pending decision: each distinct triple of one suit
    in the exchange, each suit for the missing one, and ``view.legal`` in play."""
    seat = view.seat
    if view.phase == "exchange":
        out: list[cmd.HandCommand] = []
        for suit in range(3):
            tiles = [t for t in range(suit * 9, suit * 9 + 9) for _ in range(view.hand[t])]
            for triple in sorted(set(combinations(tiles, 3))):
                out.append(cmd.ChooseExchange(seat=seat, tiles=[NAMES[t] for t in triple]))
        return out
    if view.phase == "missing":
        return [cmd.DeclareMissing(seat=seat, suit=s) for s in SUITS]
    return [c for c in view.legal if not isinstance(c, cmd.Timeout | cmd.Pause | cmd.Resume)]


def _bare(c: cmd.HandCommand) -> cmd.HandCommand:
    """The option without the ids a runner adds (the world is not the live hand)."""
    if isinstance(c, cmd.ChooseExchange):
        return cmd.ChooseExchange(seat=c.seat, tiles=list(c.tiles))
    if isinstance(c, cmd.DeclareMissing):
        return cmd.DeclareMissing(seat=c.seat, suit=c.suit)
    if isinstance(c, cmd.Discard):
        return cmd.Discard(seat=c.seat, tile=c.tile)
    if isinstance(c, cmd.Kong):
        return cmd.Kong(seat=c.seat, tile=c.tile)
    return type(c)(seat=c.seat)


def play_out(
    world: HandState, opening: list[ev.Event], view: BotView, option: cmd.HandCommand
) -> int | None:
    """The seat's final points when it takes ``option`` in ``world`` and four normal bots
    play the rest; None if the world refuses the option (it cannot happen in a world that
    fits the view, but a world is a guess)."""
    s = world.copy()
    trackers = [SeatTracker(i) for i in range(4)]
    if opening:
        for t in trackers:
            t.observe_all(opening)
    else:
        for t, v in zip(trackers, seat_views(s, view.wins), strict=True):
            t.view = v
    result = handle(s, option)
    if isinstance(result, cmd.Rejection):
        return None
    for t in trackers:
        t.observe_all(result)
    decisions = 0
    while s.phase != "ended":
        decisions += 1
        if decisions > MAX_DECISIONS:
            raise RuntimeError("a world did not end")
        seat = pending_seats(s)[0]
        v = trackers[seat].view
        v.legal = legal_actions(s, seat) if s.phase == "play" else []
        result = handle(s, _POLICY.decide(v))
        if isinstance(result, cmd.Rejection):
            raise RuntimeError(f"the policy bot was refused in a world: {result.reason}")
        for t in trackers:
            t.observe_all(result)
    return s.scores[view.seat]


def option_samples(
    view: BotView, options: Sequence[cmd.HandCommand], worlds: int = WORLDS
) -> list[list[int]]:
    """Each option's final points in each of ``worlds`` sampled worlds (the same worlds for
    every option); a world that refuses an option is left out for all of them."""
    rng = random.Random(_digest(view))
    bare = [_bare(c) for c in options]
    out: list[list[int]] = [[] for _ in options]
    for _ in range(worlds):
        try:
            world, opening = sample_world(view, random.Random(rng.getrandbits(64)))
        except NoWorld:
            continue
        points = [play_out(world, opening, view, c) for c in bare]
        if any(p is None for p in points):
            continue
        for row, p in zip(out, points, strict=True):
            row.append(p if p is not None else 0)
    return out


def option_values(
    view: BotView, options: Sequence[cmd.HandCommand] | None = None, *, worlds: int | None = None
) -> list[tuple[cmd.HandCommand, float]]:
    """The seat's expected final points for each option (default: every legal option), in
    the order given; deterministic for the same view."""
    chosen = list(options) if options is not None else all_options(view)
    if not chosen:
        return []
    samples = option_samples(view, chosen, WORLDS if worlds is None else worlds)
    return [
        (c, sum(row) / len(row) if row else float("-inf"))
        for c, row in zip(chosen, samples, strict=True)
    ]


def _same(a: cmd.HandCommand, b: cmd.HandCommand) -> bool:
    return _bare(a) == _bare(b)


class ExpertBot(StrongBot):
    """The strong bot, with its choice played out against the alternatives where it
    matters: the exchange, the missing suit, every claim, kongs, and discards near ready or
    late in the wall (see the module note)."""

    strength = "expert"

    def __init__(self, worlds: int = WORLDS, margin: float = MARGIN) -> None:
        self.worlds = worlds
        self.margin = margin

    def _pick(
        self, view: BotView, default: cmd.HandCommand, candidates: list[cmd.HandCommand]
    ) -> cmd.HandCommand:
        unique: list[cmd.HandCommand] = [default]
        for c in candidates:
            if not any(_same(c, u) for u in unique):
                unique.append(c)
        if len(unique) == 1:
            return default
        values = option_values(view, unique, worlds=self.worlds)
        base = values[0][1]
        best, value = max(values, key=lambda cv: cv[1])
        return best if value - base > self.margin else default

    def exchange(self, view: BotView) -> list[int]:
        default = super().exchange(view)
        seat = view.seat
        names = [NAMES[t] for t in default]
        candidates: list[cmd.HandCommand] = [
            cmd.ChooseExchange(seat=seat, tiles=[NAMES[t] for t in weakest_three(view.hand, s)])
            for s in range(3)
            if sum(view.hand[s * 9 : s * 9 + 9]) >= 3
        ]
        chosen = self._pick(view, cmd.ChooseExchange(seat=seat, tiles=names), candidates)
        assert isinstance(chosen, cmd.ChooseExchange)
        return sorted(INDEX[t] for t in chosen.tiles)

    def missing_suit(self, view: BotView) -> int:
        default = super().missing_suit(view)
        seat = view.seat
        candidates: list[cmd.HandCommand] = [cmd.DeclareMissing(seat=seat, suit=s) for s in SUITS]
        chosen = self._pick(view, cmd.DeclareMissing(seat=seat, suit=SUITS[default]), candidates)
        assert isinstance(chosen, cmd.DeclareMissing)
        return SUITS.index(chosen.suit)

    def respond(self, view: BotView, options: Choices) -> cmd.HandCommand:
        default = super().respond(view, options)
        return self._pick(view, default, all_options(view))

    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        default = super().turn(view, options)
        if options.hu:
            return default  # a self-drawn win: three seats pay value + 1
        missing = view.missing[view.seat]
        if missing is not None and view.keys[missing]:
            return default  # the missing suit goes first, whatever else is held
        hand = Efficiency(view, available(view))
        ranked = hand.discards(options.discards)
        late = view.wall_left <= FOLD_WALL
        if ranked[0][0] > NEAR_READY and not late and not options.kongs:
            return default
        candidates: list[cmd.HandCommand] = [kong(view, t) for t in options.kongs]
        top = sorted(ranked, key=lambda r: -r[1])[:CANDIDATES]
        candidates.extend(discard(view, t) for _, _, t in top)
        if late:
            foes = threats(view)
            safest = min(options.discards, key=lambda t: (danger(view, foes, t), t))
            candidates.append(discard(view, safest))
        return self._pick(view, default, candidates)


__all__ = ["WORLDS", "ExpertBot", "all_options", "option_samples", "option_values", "play_out"]
