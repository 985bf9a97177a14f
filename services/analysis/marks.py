"""Marks and accuracy: what a decision's loss (expected final points given up against the
best option, ``schemas.analysis.ReviewedDecision.loss``) is called, and one figure per seat.

The thresholds are in expected points of the seat's final score. The whole difference
between the strong and the normal computer is about half a point a hand (docs/bots.md, the
ladder), spread over some fifteen decisions a seat (58 a hand for four seats): so 0.3 points
in one decision is already a clear slip, a point is a real mistake (twice what a whole hand
of better play is worth), and 1.5 is a blunder. Measured with the expert (24 worlds,
confirmed on 96) over 20 deals: a good ready hand (five or more live winning tiles, 25 or more
tiles in the wall) broken by its safest breaking discard cost a median 1.25 points, a blunder
in 9 deals and a mistake in 4 (early in the wall a hand one from ready is often ready again
soon); the expert's own play, reviewed, stays below a point. Below 0.3 the valuation's noise
is of the same size, so nothing is named there.

| loss (points) | mark |
|---|---|
| < 0.3 | best |
| ≥ 0.3 | inaccuracy |
| ≥ 1.0 | mistake |
| ≥ 1.5 | blunder |
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from schemas.analysis import Mark

INACCURACY = 0.3
MISTAKE = 1.0
BLUNDER = 1.5
"""The loss thresholds, in expected points (see the module note)."""

ACCURACY_SCALE = 1.0
"""``k`` of ``accuracy``: each point given up in one decision divides its score by e."""


def mark(loss: float) -> Mark:
    """The mark of a decision that gave up ``loss`` expected points."""
    if loss >= BLUNDER:
        return "blunder"
    if loss >= MISTAKE:
        return "mistake"
    if loss >= INACCURACY:
        return "inaccuracy"
    return "best"


def decision_score(loss: float) -> float:
    """One decision's share of the accuracy, 0-100: ``100 · exp(-loss / k)``."""
    return 100.0 * math.exp(-max(0.0, loss) / ACCURACY_SCALE)


def accuracy(losses: Iterable[float]) -> float:
    """A seat's accuracy, 0-100: the mean over its reviewed decisions of
    ``100 · exp(-loss / k)`` with k = 1 point (100 when it had none to review).

    Like Lichess's accuracy, a mean of per-move scores rather than a count of marks or a mean
    loss: a best decision scores 100, and a decision scores less the more it gave up, smoothly
    (0.3 points: 74, one point: 37, 1.5: 22), so near-best play reads near 100 and each slip
    costs in proportion to its size. The score is bounded below by 0, so one catastrophic
    decision costs at most one decision's share and does not drown the rest of the hand, as it
    would in a mean of losses (whose scale also depends on how much was at stake in the hand).
    """
    scores = [decision_score(x) for x in losses]
    return sum(scores) / len(scores) if scores else 100.0
