"""The rating formula of RULES.md §9 and the fold of rated results into ratings. Pure: no I/O.

Pairwise Elo among the four players of a hand, with the ratings from before the hand:

    S_ij = 1, ½, 0  as  p_i >, =, < p_j
    E_ij = 1 / (1 + 10^((R_j − R_i)/400))
    ΔR_i = K_i/3 · Σ_{j≠i} (S_ij − E_ij)      K_i = 64 while i has < 10 rated hands, else 32

Floating point is evaluated in one fixed order, the one the shared conformance vector
(``ratings/pairwise-elo-14-hands.json``) describes: for each player ``i``, the sum starts
at 0.0 and adds ``S_ij − E_ij`` over the opponents in seat order; the sum is multiplied by
``K_i/3`` and added to the rating before the hand. Every path that computes a rating — the
live service, ``ratings recompute`` and the tests — goes through ``Fold.apply`` below, so the
same results in the same order give the same IEEE doubles, bit for bit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from schemas.rating import RatedHandResult, decode_result

START_RATING = 1500.0
PROVISIONAL_HANDS = 10
"""A player is provisional while fewer than this many rated hands are done."""
K_PROVISIONAL = 64
K_ESTABLISHED = 32
VARIANTS = frozenset({"sichuan"})
TIMED_CLOCKS = frozenset({"bullet", "blitz", "standard", "relaxed"})
"""RULES.md §8's clock presets; a rated hand has one of them."""

_K3_PROVISIONAL = K_PROVISIONAL / 3
_K3_ESTABLISHED = K_ESTABLISHED / 3

# Column orders of the rows the fold produces; the stores' tables have these columns.
RATING_COLUMNS = ("variant", "player", "rating", "rated_hands", "provisional", "last_seq")
HISTORY_COLUMNS = (
    "variant",
    "player",
    "seq",
    "hand_id",
    "table_id",
    "seat",
    "points",
    "rating_before",
    "rating_after",
    "delta",
    "rated_hands",
)
HAND_COLUMNS = ("variant", "hand_id", "seq", "table_id")

RatingRow = tuple[str, str, float, int, bool, int]
HistoryRow = tuple[str, str, int, str, str, int, int, float, float, float, int]
HandRow = tuple[str, str, int, str]


# --- the formula --------------------------------------------------------------------------


def k_factor(rated_hands_before: int) -> int:
    """``K_i``: 64 while fewer than 10 rated hands came before this one, else 32."""
    return K_PROVISIONAL if rated_hands_before < PROVISIONAL_HANDS else K_ESTABLISHED


def is_provisional(rated_hands: int) -> bool:
    """Whether a player with ``rated_hands`` done is still provisional."""
    return rated_hands < PROVISIONAL_HANDS


def actual_score(p_i: int, p_j: int) -> float:
    """``S_ij``: 1, ½ or 0 as player i's final points are above, equal to or below j's."""
    return 1.0 if p_i > p_j else 0.5 if p_i == p_j else 0.0


def expected_score(r_i: float, r_j: float) -> float:
    """``E_ij = 1 / (1 + 10^((R_j − R_i)/400))``."""
    return 1 / (1 + 10 ** ((r_j - r_i) / 400))


def deltas(
    ratings: Sequence[float], rated_hands: Sequence[int], points: Sequence[int]
) -> list[float]:
    """``ΔR_i`` of every seat, from the ratings and rated-hand counts before the hand."""
    out = []
    for i, r_i in enumerate(ratings):
        total = 0.0
        for j, r_j in enumerate(ratings):
            if j != i:
                total += actual_score(points[i], points[j]) - expected_score(r_i, r_j)
        out.append(total * (k_factor(rated_hands[i]) / 3))
    return out


def new_ratings(
    ratings: Sequence[float], rated_hands: Sequence[int], points: Sequence[int]
) -> list[float]:
    """Every seat's rating after the hand."""
    return [r + d for r, d in zip(ratings, deltas(ratings, rated_hands, points), strict=True)]


# --- which results count ------------------------------------------------------------------


def ignore_reason(result: RatedHandResult) -> str | None:
    """Why a result must not change any rating (RULES.md §9), or None when it is rated."""
    if not result.rated:
        return "casual"
    if result.practice:
        return "practice"
    if result.computer_seats:
        return "computer_seats"
    if result.clock not in TIMED_CLOCKS:
        return "untimed" if result.clock in (None, "", "untimed") else "unknown_clock"
    if result.variant not in VARIANTS:
        return "unknown_variant"
    players = result.players
    if (
        not result.hand_id
        or len(players) != 4
        or len(result.points) != 4
        or len(set(players)) != 4
        or not all(players)
    ):
        return "malformed"
    return None


# --- the fold -----------------------------------------------------------------------------


class PlayerState:
    """One player's standing in one variant while folding."""

    __slots__ = ("last_seq", "rated_hands", "rating")

    def __init__(self, rating: float = START_RATING, rated_hands: int = 0, last_seq: int = -1):
        self.rating = rating
        self.rated_hands = rated_hands
        self.last_seq = last_seq


@dataclass(frozen=True, slots=True)
class Ignored:
    """A result that changed nothing, and why."""

    seq: int
    hand_id: str
    reason: str


class Fold:
    """Rated results folded in log order into ratings, history rows and applied hands.

    ``seq`` is the result's offset in ``rating.results``: the one fixed order. The live
    service starts a fold per batch from the players and hand ids it loads from its store;
    ``ratings recompute`` folds the whole log into one fresh ``Fold``.
    """

    def __init__(self) -> None:
        self.players: dict[str, dict[str, PlayerState]] = {}
        self.seen: dict[str, set[str]] = {}
        self.history: list[HistoryRow] = []
        self.hands: list[HandRow] = []
        self.ignored: list[Ignored] = []
        self.reasons: Counter[str] = Counter()

    # --- seeding from a store ---------------------------------------------------------------

    def load(
        self, variant: str, player: str, rating: float, rated_hands: int, last_seq: int
    ) -> None:
        """A player's stored standing, before folding further results."""
        self.players.setdefault(variant, {})[player] = PlayerState(rating, rated_hands, last_seq)

    def already_applied(self, variant: str, hand_id: str) -> None:
        """A hand the store has applied before: a result for it again is a duplicate."""
        self.seen.setdefault(variant, set()).add(hand_id)

    # --- folding ------------------------------------------------------------------------------

    @property
    def applied(self) -> int:
        return len(self.hands)

    def apply_record(self, seq: int, raw: bytes) -> str | None:
        """Decode and apply one record of ``rating.results``; returns why it was ignored."""
        try:
            result = decode_result(raw)
        except msgspec.DecodeError:
            return self.ignore(seq, "", "undecodable")
        return self.apply(seq, result)

    def apply(self, seq: int, result: RatedHandResult) -> str | None:
        """Apply one result (RULES.md §9); returns why it was ignored, None when applied."""
        reason = ignore_reason(result)
        if reason is not None:
            return self.ignore(seq, result.hand_id, reason)
        variant = result.variant
        seen = self.seen.get(variant)
        if seen is None:
            seen = self.seen[variant] = set()
        hand_id = result.hand_id
        if hand_id in seen:
            return self.ignore(seq, hand_id, "duplicate")
        seen.add(hand_id)
        table = self.players.get(variant)
        if table is None:
            table = self.players[variant] = {}
        names = result.players
        states = []
        for name in names:
            state = table.get(name)
            if state is None:
                state = table[name] = PlayerState()
            states.append(state)
        before = [s.rating for s in states]
        points = result.points
        table_id = result.table_id
        history = self.history
        # The formula inlined (see ``deltas``): this loop is the whole cost of a recompute.
        for i in range(4):
            r_i = before[i]
            p_i = points[i]
            total = 0.0
            for j in range(4):
                if j != i:
                    p_j = points[j]
                    total += (1.0 if p_i > p_j else 0.5 if p_i == p_j else 0.0) - 1 / (
                        1 + 10 ** ((before[j] - r_i) / 400)
                    )
            state = states[i]
            done = state.rated_hands
            delta = total * (_K3_PROVISIONAL if done < PROVISIONAL_HANDS else _K3_ESTABLISHED)
            after = r_i + delta
            state.rating = after
            state.rated_hands = done + 1
            state.last_seq = seq
            history.append(
                (variant, names[i], seq, hand_id, table_id, i, p_i, r_i, after, delta, done + 1)
            )
        self.hands.append((variant, hand_id, seq, table_id))
        return None

    def ignore(self, seq: int, hand_id: str, reason: str) -> str:
        """Record a result that changes nothing, and why; returns the reason."""
        self.ignored.append(Ignored(seq, hand_id, reason))
        self.reasons[reason] += 1
        return reason

    # --- results ------------------------------------------------------------------------------

    def rating_rows(self, only: set[tuple[str, str]] | None = None) -> list[RatingRow]:
        """Current standings, as rows of ``RATING_COLUMNS`` (only some players if given)."""
        return [
            (variant, name, s.rating, s.rated_hands, s.rated_hands < PROVISIONAL_HANDS, s.last_seq)
            for variant, table in self.players.items()
            for name, s in table.items()
            if only is None or (variant, name) in only
        ]

    def touched(self) -> set[tuple[str, str]]:
        """The (variant, player) pairs whose rating this fold changed."""
        return {(row[0], row[1]) for row in self.history}
