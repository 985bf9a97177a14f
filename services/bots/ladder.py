"""The ladder: bots of different strengths on duplicate deals, and self-play throughput.

*Duplicate* means every deal (one seed: the same wall, hands and exchange direction) is
replayed with the strengths rotated through the seats, so the luck of the deal cancels out
and what remains is play. With three strengths on four seats a deal is played twelve times:
the lineups ``a b c a``, ``a b c b`` and ``a b c c``, each in its four rotations, so every
strength sits in every seat equally often.

Hands run in-process on the pure engine (``start_hand``, ``handle``); each bot gets its seat's
``BotView`` from a ``SeatTracker``, never the hand state. A strength's mean points per hand
comes with a 95% confidence interval over *deals* (the replays of one deal are not
independent, the deals are): mean ± 1.96 · sd(per-deal means) / √deals.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

from schemas import commands as cmd
from services.bots.bot import Bot, Choices
from services.bots.botview import BotView
from services.bots.tracker import SeatTracker
from services.rules import handle, legal_actions, pending_seats, random_seed, shuffle, start_hand

Z95 = 1.96
MAX_DECISIONS = 2000  # far above any real hand; a guard against a bot that stalls a hand


class BotError(RuntimeError):
    """A bot sent a command the engine refused, or a hand did not end."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """One played hand: final points per seat, how it ended, decisions made."""

    scores: tuple[int, ...]
    end: str
    decisions: int


def play_hand(seed: bytes, bots: Sequence[Bot], hand_id: str = "hand") -> HandResult:
    """Play one hand of the deal ``seed`` to the end, seat ``i`` played by ``bots[i]``.

    Every bot decides from its own tracker's view; the engine validates every command, and
    a refused one raises ``BotError`` (a bot must never send an illegal command).
    """
    state, events = start_hand("ladder", hand_id, shuffle(seed), seed=seed)
    trackers = [SeatTracker(s) for s in range(4)]
    for tracker in trackers:
        tracker.observe_all(events)
    decisions = 0
    while state.phase != "ended":
        if decisions >= MAX_DECISIONS:
            raise BotError(f"hand {hand_id} did not end after {decisions} decisions")
        seat = pending_seats(state)[0]
        view = trackers[seat].view
        # Opening decisions need no list (see Bot.decide); building every exchange triple
        # would cost more than the decision.
        view.legal = legal_actions(state, seat) if state.phase == "play" else []
        command = bots[seat].decide(view)
        result = handle(state, command)
        if isinstance(result, cmd.Rejection):
            raise BotError(f"{bots[seat].strength} bot sent {command}: {result.reason}")
        for tracker in trackers:
            tracker.observe_all(result)
        decisions += 1
    return HandResult(tuple(state.scores), state.end or "", decisions)


def seatings(strengths: Sequence[str]) -> list[tuple[str, ...]]:
    """Every seating a deal is played with: balanced lineups in all four rotations."""
    names = list(strengths)
    if len(names) == 1:
        lineups = [names * 4]
    elif len(names) == 2:
        a, b = names
        lineups = [[a, b, a, b], [a, a, b, b]]
    elif len(names) == 3:
        lineups = [[*names, x] for x in names]
    elif len(names) == 4:
        lineups = [names]
    else:
        raise ValueError("a ladder compares one to four strengths")
    return [tuple(lineup[(i + k) % 4] for i in range(4)) for lineup in lineups for k in range(4)]


@dataclass(frozen=True, slots=True)
class Standing:
    """One strength's result: mean points per hand and its 95% confidence interval."""

    strength: str
    mean: float
    low: float
    high: float
    seat_hands: int


class Timed:
    """A record of hands played in ``seconds`` of wall-clock time, and their speed."""

    __slots__ = ()
    hands: int
    seconds: float

    @property
    def hands_per_s(self) -> float:
        """Hands per second of wall-clock time."""
        return self.hands / self.seconds if self.seconds else 0.0


@dataclass(frozen=True, slots=True)
class LadderResult(Timed):
    """The standings (best first), how many hands and deals, and how fast they ran."""

    standings: list[Standing]
    hands: int
    deals: int
    seconds: float
    cpu_seconds: float

    def ordered(self, order: Sequence[str]) -> bool:
        """Whether the strengths in ``order`` (best first) have strictly separated intervals."""
        by = {s.strength: s for s in self.standings}
        return all(by[hi].low > by[lo].high for hi, lo in pairwise(order))


def _mean_ci(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, Z95 * math.sqrt(var / n)


def run_ladder(
    bots: dict[str, Bot],
    hands: int = 2000,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> LadderResult:
    """Play at least ``hands`` hands of duplicate deals between the given strengths."""
    plan = seatings(list(bots))
    deals = max(2, math.ceil(hands / len(plan)))
    rng = random.Random(seed)
    per_deal: dict[str, list[float]] = {name: [] for name in bots}
    counts = dict.fromkeys(bots, 0)
    played = 0
    began, began_cpu = time.perf_counter(), time.process_time()
    for d in range(deals):
        deal_seed = random_seed(rng)
        totals = dict.fromkeys(bots, 0)
        seats_of = dict.fromkeys(bots, 0)
        for k, lineup in enumerate(plan):
            result = play_hand(deal_seed, [bots[name] for name in lineup], f"deal-{d}-{k}")
            for name, points in zip(lineup, result.scores, strict=True):
                totals[name] += points
                seats_of[name] += 1
            played += 1
            if progress:
                progress(played, deals * len(plan))
        for name in bots:
            per_deal[name].append(totals[name] / seats_of[name])
            counts[name] += seats_of[name]
    seconds, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    standings = []
    for name, values in per_deal.items():
        mean, half = _mean_ci(values)
        standings.append(Standing(name, mean, mean - half, mean + half, counts[name]))
    standings.sort(key=lambda s: -s.mean)
    return LadderResult(standings, played, deals, seconds, cpu)


@dataclass(frozen=True, slots=True)
class OneVsThree(Timed):
    """A challenger against three copies of an opponent on duplicate deals: the
    challenger's mean points per hand with its 95% interval over deals (the opponents take
    the negative third of it: every hand's points sum to zero)."""

    challenger: str
    opponent: str
    mean: float
    low: float
    high: float
    hands: int
    deals: int
    seconds: float
    cpu_seconds: float
    decision_p50_ms: float = 0.0
    decision_p99_ms: float = 0.0

    @property
    def above_zero(self) -> bool:
        """Whether the whole interval is above zero: the challenger is stronger."""
        return self.low > 0


def one_vs_three_deal(
    deal_seed: bytes, challenger: Bot, opponent: Bot, name: str = "deal"
) -> float:
    """The challenger's mean points over the four hands of one deal, one per seat, with
    three copies of the opponent in the other seats."""
    total = 0
    for k in range(4):
        lineup = [challenger if s == k else opponent for s in range(4)]
        total += play_hand(deal_seed, lineup, f"{name}-{k}").scores[k]
    return total / 4


def deal_seeds(deals: int, seed: int) -> list[bytes]:
    """The deals of a ladder run: the same ``seed`` always gives the same walls."""
    rng = random.Random(seed)
    return [random_seed(rng) for _ in range(deals)]


class TimedBot(Bot):
    """A bot whose every decision is timed (``times``, seconds of this process's CPU)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.strength = bot.strength  # type: ignore[misc]
        self.times: list[float] = []

    def decide(self, view: BotView) -> cmd.HandCommand:
        began = time.process_time()
        try:
            return self.bot.decide(view)
        finally:
            self.times.append(time.process_time() - began)

    def exchange(self, view: BotView) -> list[int]:
        return self.bot.exchange(view)

    def missing_suit(self, view: BotView) -> int:
        return self.bot.missing_suit(view)

    def respond(self, view: BotView, options: Choices) -> cmd.HandCommand:
        return self.bot.respond(view, options)

    def turn(self, view: BotView, options: Choices) -> cmd.HandCommand:
        return self.bot.turn(view, options)


def _deal_task(task: tuple[int, bytes, str, str]) -> tuple[float, list[float]]:
    d, deal_seed, challenger, opponent = task
    from services.bots import make_bot  # a worker process makes its own bots

    timed = TimedBot(make_bot(challenger))
    mean = one_vs_three_deal(deal_seed, timed, make_bot(opponent), f"deal-{d}")
    return mean, timed.times


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def one_vs_three(
    challenger: str,
    opponent: str,
    deals: int = 1000,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
) -> OneVsThree:
    """One-versus-three duplicate play: each deal four times, the challenger in each seat
    in turn and the opponent in the other three (as strong mahjong AIs are measured).

    ``workers`` processes share the deals (the figures do not depend on how many); the
    challenger's decision times are CPU time in its own process, one core each."""
    tasks = [(d, s, challenger, opponent) for d, s in enumerate(deal_seeds(deals, seed))]
    per_deal: list[float] = []
    times: list[float] = []
    began, began_cpu = time.perf_counter(), time.process_time()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = pool.map(_deal_task, tasks, chunksize=4)
            for mean, t in results:
                per_deal.append(mean)
                times.extend(t)
                if progress:
                    progress(len(per_deal) * 4, deals * 4)
        cpu = time.process_time() - began_cpu + sum(times)  # the workers' share, roughly
    else:
        for task in tasks:
            mean, t = _deal_task(task)
            per_deal.append(mean)
            times.extend(t)
            if progress:
                progress(len(per_deal) * 4, deals * 4)
        cpu = time.process_time() - began_cpu
    seconds = time.perf_counter() - began
    mean, half = _mean_ci(per_deal)
    return OneVsThree(
        challenger,
        opponent,
        mean,
        mean - half,
        mean + half,
        deals * 4,
        deals,
        seconds,
        cpu,
        round(_quantile(times, 0.5) * 1000, 2),
        round(_quantile(times, 0.99) * 1000, 2),
    )


@dataclass(frozen=True, slots=True)
class Throughput(Timed):
    """Self-play speed: hands, decisions, wall-clock and CPU seconds."""

    hands: int
    decisions: int
    seconds: float
    cpu_seconds: float

    @property
    def hands_per_cpu_s(self) -> float:
        """Hands per second of this process's CPU time (steadier on a busy machine)."""
        return self.hands / self.cpu_seconds if self.cpu_seconds else 0.0


def self_play(bot: Bot, hands: int, seed: int = 0) -> Throughput:
    """Four copies of ``bot`` play ``hands`` hands of fresh deals, instantly, without I/O."""
    rng = random.Random(seed)
    seeds = [random_seed(rng) for _ in range(hands)]
    bots = [bot] * 4
    decisions = 0
    began, began_cpu = time.perf_counter(), time.process_time()
    for i, deal_seed in enumerate(seeds):
        decisions += play_hand(deal_seed, bots, f"self-{i}").decisions
    return Throughput(
        hands, decisions, time.perf_counter() - began, time.process_time() - began_cpu
    )
