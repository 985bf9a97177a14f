"""Bot benchmarks: the duplicate ladder (strong > normal > easy) and self-play throughput.

The ladder is ``mahjong-planet ladder``'s: in-process on the pure engine, each deal replayed
with the strengths rotated through the seats, a 95% confidence interval per strength over
deals. Self-play is four bots of one strength on fresh deals, instant, no I/O, one process;
its CPU-time rate is given too, as the wall-clock one suffers when the machine is shared.
"""

from __future__ import annotations

from typing import Any

from services.bots import make_bot
from services.bots.ladder import run_ladder, self_play

LADDER_HANDS = 4800  # 400 deals of 12 seatings
LADDER_SEED = 0
SELF_PLAY_HANDS = {"easy": 1000, "normal": 2000, "strong": 300}
ORDER = ["strong", "normal", "easy"]


def bench_ladder(hands: int = LADDER_HANDS, seed: int = LADDER_SEED) -> dict[str, Any]:
    """Each strength's mean points per hand with its interval, and whether they separate."""
    bots = {name: make_bot(name) for name in reversed(ORDER)}
    result = run_ladder(bots, hands, seed)
    out: dict[str, Any] = {"ladder_hands": result.hands, "ladder_deals": result.deals}
    for s in result.standings:
        out[f"{s.strength}_points_per_hand"] = round(s.mean, 3)
        out[f"{s.strength}_ci95"] = f"[{s.low:+.3f}, {s.high:+.3f}]"
    out["strong_normal_easy_separated"] = int(result.ordered(ORDER))
    out["ladder_hands_per_s"] = round(result.hands_per_s, 1)
    return out


def bench_self_play() -> dict[str, Any]:
    """Hands per second with four bots of each strength (normal: the one with a target)."""
    out: dict[str, Any] = {}
    for name, hands in SELF_PLAY_HANDS.items():
        speed = self_play(make_bot(name), hands, seed=1)
        out[f"selfplay_{name}_hands_per_s"] = round(speed.hands_per_s, 1)
        out[f"selfplay_{name}_hands_per_cpu_s"] = round(speed.hands_per_cpu_s, 1)
        if name == "normal":
            out["selfplay_normal_decisions_per_hand"] = round(speed.decisions / speed.hands, 1)
    return out


def run_all() -> dict[str, Any]:
    return {**bench_self_play(), **bench_ladder()}
