"""Rules-engine benchmarks: complete-hand checks, waits, and whole random hands.

The complete-hand check is timed side by side with the ``mahjong`` PyPI package's agari check
on the same hands, converted to its 34-count array.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from services.rules.fan import complete_from_counts, is_complete, suit_keys, winning_tiles
from services.rules.selfplay import play_random_hand

Figures = dict[str, Any]


def _rate(fn: Callable[[], int], min_seconds: float = 1.0) -> float:
    """Operations per second of ``fn`` (which returns how many it did), best of three runs."""
    best = 0.0
    for _ in range(3):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < min_seconds / 3:
            done += fn()
        best = max(best, done / elapsed)
    return best


def _random_hand(rng: random.Random, size: int) -> list[int]:
    counts = [0] * 27
    n = 0
    while n < size:
        t = rng.randrange(27)
        if counts[t] < 4:
            counts[t] += 1
            n += 1
    return counts


def _complete_hand(rng: random.Random) -> list[int]:
    while True:
        counts = [0] * 27
        pair = rng.randrange(27)
        counts[pair] += 2
        for _ in range(4):
            if rng.random() < 0.5:
                t = rng.randrange(27)
                counts[t] += 3
            else:
                s, r = rng.randrange(3), rng.randrange(7)
                for d in range(3):
                    counts[s * 9 + r + d] += 1
        if max(counts) <= 4:
            return counts


def sample_hands(n: int, seed: int = 1) -> list[list[int]]:
    """Half complete hands, half random 14-tile hands (mostly not complete)."""
    rng = random.Random(seed)
    return [_complete_hand(rng) if i % 2 else _random_hand(rng, 14) for i in range(n)]


def to_34(counts: list[int]) -> list[int]:
    """Our 27 counts (m, p, s) as the riichi 34-array (man, pin, sou, then honours)."""
    return list(counts) + [0] * 7


def bench_complete(hands: list[list[int]]) -> Figures:
    from mahjong.agari import Agari

    agari = Agari()
    arrays = [to_34(h) for h in hands]
    keys = [suit_keys(h) for h in hands]

    def ours() -> int:
        for h in hands:
            complete_from_counts(h)
        return len(hands)

    def ours_keys() -> int:
        for k in keys:
            is_complete(k, 0, None)
        return len(keys)

    def peer() -> int:
        for a in arrays[:2000]:
            agari.is_agari(a)
        return 2000

    # Agreement: riichi's seven pairs needs seven different pairs; ours counts a quad as two.
    differ = [
        h
        for h, a in zip(hands, arrays, strict=True)
        if complete_from_counts(h) != agari.is_agari(a)
    ]
    quad_pairs = sum(1 for h in differ if all(c % 2 == 0 for c in h) and 4 in h)
    ours_rate, keys_rate, peer_rate = _rate(ours), _rate(ours_keys), _rate(peer)
    return {
        "complete_checks_per_s": round(keys_rate),
        "mahjong_pkg_agari_checks_per_s": round(peer_rate),
        "speedup_vs_mahjong_pkg": round(keys_rate / peer_rate, 1),
        "complete_checks_from_27_counts_per_s": round(ours_rate),
        "speedup_from_27_counts_vs_mahjong_pkg": round(ours_rate / peer_rate, 1),
        "hands_compared": len(hands),
        "disagreements": len(differ),
        "disagreements_explained_by_quad_seven_pairs": quad_pairs,
    }


def bench_waits(n: int = 5000) -> Figures:
    rng = random.Random(2)
    hands = [suit_keys(_random_hand(rng, 13)) for _ in range(n // 2)]
    # Ready-ish hands: a complete hand minus one tile.
    for _ in range(n - len(hands)):
        c = _complete_hand(rng)
        t = rng.choice([t for t in range(27) if c[t]])
        c[t] -= 1
        hands.append(suit_keys(c))

    def run() -> int:
        for k in hands:
            winning_tiles(k, 0, None)
        return len(hands)

    return {"wait_computations_per_s": round(_rate(run))}


def bench_hands(seconds: float = 3.0) -> Figures:
    out: Figures = {}
    for name, eager in (("random_hands_per_s", False), ("eager_random_hands_per_s", True)):
        rng = random.Random(3)

        def run(rng: random.Random = rng, eager: bool = eager) -> int:
            play_random_hand(rng, eager=eager)
            return 1

        out[name] = round(_rate(run, seconds), 1)
    return out


def run_all() -> Figures:
    hands = sample_hands(20000)
    return {**bench_complete(hands), **bench_waits(), **bench_hands()}
