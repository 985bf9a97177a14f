"""``review_hand``: every decision of the reviewed seats in a finished hand, valued from the
seat's own view at that moment (pure: events in, a ``HandReview`` out).

The hand's log is replayed with the rules engine (``services.rules.apply``) only to know
*when* a seat had a decision and which options were legal then; what the options are worth
is asked of the evaluator with the seat's ``BotView`` at that moment, folded by a
``SeatTracker`` from the events before the decision, which keeps only what RULES.md §10 lets
the seat see. The evaluator never sees the hand state, the wall, another seat's tiles or
anything that happened later.

A decision is a command of the seat that produced events. Each command's first event names
it, and that event alone says what was played (``played_command``):

| first event | command | kind |
|---|---|---|
| ``exchange_chosen`` | ``choose_exchange`` | exchange |
| ``missing_suit_declared`` | ``declare_missing`` | missing |
| ``tile_discarded`` | ``discard`` | turn |
| ``konged`` (concealed; added, nobody to rob) | ``kong`` | turn |
| ``robbing_window_opened`` | ``kong`` (added) | turn |
| ``won`` self-drawn | ``hu`` | turn |
| ``claim_declared`` (hu, pung, kong) | ``hu``, ``pung``, ``claim_kong`` | claim |
| ``passed`` | ``pass`` | claim |

(An exposed kong, a pung or a win on a discard are the *resolution* of a window: the seat's
decision was its ``claim_declared``, earlier.) ``ReviewedDecision.seq`` is that first event's
seq, where the replay shows the decision.

- A decision with one legal option is not reviewed (there was nothing to decide).
- The opening exchange and the missing suit are decided by each seat at its own moment: the
  view is the one the seat had when it chose (it may have seen others choose before it).
- A **timeout** (the clock's default action, its events marked ``timeout``) is reviewed like
  any decision and flagged ``timeout``: letting the clock run out is the player's choice too,
  and what the default gave up is worth showing.
"""

from __future__ import annotations

import copy
import importlib
import math
import time
from collections.abc import Callable, Sequence
from typing import cast

from schemas import commands as cmd
from schemas import events as ev
from schemas.analysis import DecisionKind, HandReview, OptionValue, ReviewedDecision, SeatReview
from schemas.commands import Command
from services.analysis.marks import INACCURACY, accuracy, mark
from services.bots.botview import BotView
from services.bots.tracker import SeatTracker
from services.rules import INDEX, HandState, apply, legal_actions

Evaluate = Callable[[BotView, Sequence[cmd.HandCommand]], list[tuple[cmd.HandCommand, float]]]
"""Values of options: the seat's expected final points after each, from its view alone."""


class HandNotReviewable(ValueError):
    """The events are not one whole finished hand."""


def expert_evaluate(worlds: int | None = None) -> Evaluate:
    """The expert computer's valuation (``services.bots.expert.option_values``), with
    ``worlds`` sampled worlds per option (None: the expert's own default)."""
    # Imported when first used: the expert is the heaviest computer, and only reviews need it.
    expert = importlib.import_module("services.bots.expert")

    def evaluate(
        view: BotView, options: Sequence[cmd.HandCommand]
    ) -> list[tuple[cmd.HandCommand, float]]:
        values: list[tuple[cmd.HandCommand, float]] = expert.option_values(
            view, options, worlds=worlds
        )
        return values

    return evaluate


def expert_name(worlds: int | None = None) -> str:
    """How a review by the expert names its valuer (``HandReview.engine``)."""
    return "expert" if worlds is None else f"expert/{worlds}-worlds"


CONFIRM_FACTOR = 4
"""A decision that looks like a slip is valued again with this many times the worlds."""
CONFIRM_TOP = 2
"""... for the played option and the best two of the first valuation."""


def expert_confirm(worlds: int | None = None) -> Evaluate:
    """The confirming valuation: the expert's with ``CONFIRM_FACTOR`` times the worlds.

    Why: the best of many options valued on a few dozen worlds is too good by chance (the
    winner's curse: with 13 exchange triples on 24 worlds, the expert's own exchange once
    read 1.6 points behind the best; on 96 worlds, 0.26). Valuing the leaders and the played
    option again on more worlds takes that out where it matters, at the decisions that would
    be marked, and costs little, since most decisions are not. The expert's worlds are drawn
    from one seed per view, so the larger valuation is a superset of the first and still
    deterministic."""
    expert = importlib.import_module("services.bots.expert")
    base: int = expert.WORLDS if worlds is None else worlds
    return expert_evaluate(base * CONFIRM_FACTOR)


SCREEN_FACTOR = 4
"""A decision with many options is first valued on this many times fewer worlds ..."""
SCREEN_KEEP = 4
"""... and only the best few of that, and the option played, on the full worlds."""


def expert_screen(worlds: int | None = None) -> Evaluate:
    """The screening valuation: the expert's with ``1 / SCREEN_FACTOR`` of the worlds.

    Why: most of a review's time is the play-outs of discards (a dozen options at each turn),
    and most of those options are clearly behind after a few worlds. Valuing every option on a
    quarter of the worlds, then the leaders and the played option on all of them, gives the
    same best and loss where it matters at about half the play-outs; an option screened out
    keeps its coarser value in the options table. The screen's worlds are the first of the
    full valuation's (one seed per view), so the two agree on what they share."""
    expert = importlib.import_module("services.bots.expert")
    base: int = expert.WORLDS if worlds is None else worlds
    return expert_evaluate(max(2, base // SCREEN_FACTOR))


Key = tuple[str, tuple[int, ...], str]
"""An option's identity (``option_key``)."""


def option_key(c: cmd.HandCommand) -> Key:
    """What identifies an option whoever sends it: its type and its tiles or suit."""
    if isinstance(c, cmd.ChooseExchange):
        return ("choose_exchange", tuple(sorted(INDEX[t] for t in c.tiles)), "")
    if isinstance(c, cmd.DeclareMissing):
        return ("declare_missing", (), c.suit)
    if isinstance(c, cmd.Discard | cmd.Kong):
        return (type(c).__name__, (INDEX[c.tile],), "")
    return (type(c).__name__, (), "")


_CLAIMS: dict[str, type[cmd.HandCommand]] = {
    "hu": cmd.Hu,
    "pung": cmd.Pung,
    "kong": cmd.ClaimKong,
}


def played_command(
    state: HandState, e: ev.Event
) -> tuple[cmd.HandCommand, DecisionKind, bool] | None:
    """The seat's command whose first event ``e`` is (``state``: the hand just before it),
    its kind and whether the clock played it; None when ``e`` begins no seat's decision."""
    if isinstance(e, ev.ExchangeChosen):
        return cmd.ChooseExchange(seat=e.seat, tiles=list(e.tiles)), "exchange", e.timeout
    if isinstance(e, ev.MissingSuitDeclared):
        return cmd.DeclareMissing(seat=e.seat, suit=e.suit), "missing", e.timeout
    if isinstance(e, ev.TileDiscarded):
        return cmd.Discard(seat=e.seat, tile=e.tile), "turn", e.timeout
    if isinstance(e, ev.RobbingWindowOpened):
        return cmd.Kong(seat=e.declarer, tile=e.tile), "turn", False
    if isinstance(e, ev.Konged) and e.kind != "exposed" and state.window is None:
        return cmd.Kong(seat=e.seat, tile=e.tile), "turn", False
    if isinstance(e, ev.Won) and e.self_drawn:
        return cmd.Hu(seat=e.seat), "turn", e.timeout
    if isinstance(e, ev.ClaimDeclared):
        return _CLAIMS[e.claim](seat=e.seat), "claim", e.timeout
    if isinstance(e, ev.Passed):
        return cmd.Pass(seat=e.seat), "claim", e.timeout
    return None


def review_hand(
    events: Sequence[ev.Event],
    seats: Sequence[int],
    players: Sequence[str] | None = None,
    evaluate: Evaluate | None = None,
    *,
    confirm: Evaluate | None = None,
    screen: Evaluate | None = None,
    worlds: int | None = None,
    request_id: str = "",
    engine: str | None = None,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> HandReview:
    """The review of a finished hand for ``seats`` (see the module note). ``players``: each
    seat's player id (default: the hand's own, from ``hand_started``); ``evaluate``: the
    valuation of options (default: the expert's, ``expert_evaluate()``, confirmed by
    ``expert_confirm()``); ``confirm``: a finer valuation of the played option and the best
    few when the first says the decision gave up at least an inaccuracy's worth; ``screen``: a
    coarser valuation of every option first, when there are more than ``SCREEN_KEEP + 1``,
    after which ``evaluate`` values only the best ``SCREEN_KEEP`` and the one played (None for
    either: none, unless ``evaluate`` is the default too); ``worlds``: the default valuations'
    worlds (None: the expert's own); ``engine``: what the review names as its valuer (default:
    ``expert_name(worlds)``, or the given evaluator's name).

    Raises ``HandNotReviewable`` when ``events`` are not one hand from its ``hand_started``
    to its ``hand_ended``."""
    if not events or not isinstance(events[0], ev.HandStarted):
        raise HandNotReviewable("the log does not begin with the hand's hand_started")
    if not isinstance(events[-1], ev.HandEnded):
        raise HandNotReviewable(f"hand {events[0].hand_id} has not ended")
    start = events[0]
    wanted = sorted(set(seats))
    if any(not 0 <= s <= 3 for s in wanted):
        raise ValueError(f"seats must be 0-3, got {list(seats)}")
    if evaluate is None:
        evaluate = expert_evaluate(worlds)
        confirm = confirm or expert_confirm(worlds)
        screen = screen or expert_screen(worlds)
        engine = engine or expert_name(worlds)
    named = engine or str(getattr(evaluate, "__name__", "custom"))
    names = list(players) if players is not None else list(start.seats)
    trackers = {s: SeatTracker(s) for s in wanted}
    state = HandState()
    decisions: list[ReviewedDecision] = []
    for e in events:
        found = played_command(state, e) if state.phase != "ended" else None
        if found is not None and found[0].seat in trackers:
            played, kind, timeout = found
            decision = _review_decision(
                state,
                trackers[played.seat],
                played,
                kind,
                timeout,
                e.seq,
                (evaluate, confirm, screen),
            )
            if decision is not None:
                decisions.append(decision)
        apply(state, e)
        for tracker in trackers.values():
            tracker.observe(e)
    return HandReview(
        hand_id=start.hand_id,
        table_id=start.table_id,
        request_id=request_id,
        seats=[_seat_review(s, names[s], decisions) for s in wanted],
        decisions=decisions,
        engine=named[:64],
        reviewed_at_ms=now_ms(),
    )


def _review_decision(
    state: HandState,
    tracker: SeatTracker,
    played: cmd.HandCommand,
    kind: DecisionKind,
    timeout: bool,
    seq: int,
    valuations: tuple[Evaluate, Evaluate | None, Evaluate | None],
) -> ReviewedDecision | None:
    evaluate, confirm, screen = valuations
    seat = played.seat
    options = legal_actions(state, seat)  # what the seat's own view lists (SeatView)
    if len(options) < 2:
        return None
    view: BotView = copy.deepcopy(tracker.view)
    view.legal = options
    mine = option_key(played)
    by_option = {option_key(c): c for c in options}
    # Screened-out options keep their coarse values for the table, apart from the others:
    # the best and the loss are taken among the options valued in full only (a coarse value
    # is noisier, so the maximum over them would be too good by chance).
    coarse: dict[Key, float] = {}
    finalists = list(options)
    if screen is not None and len(options) > SCREEN_KEEP + 1:
        coarse = {option_key(c): v for c, v in screen(view, options)}
        leaders = sorted(coarse, key=lambda k: -coarse[k])[:SCREEN_KEEP]
        finalists = [by_option.get(k, played) for k in dict.fromkeys([*leaders, mine])]
    values = {option_key(c): v for c, v in evaluate(view, finalists)}
    if mine not in values:  # the evaluator left it out: value it on its own
        values.update((option_key(c), v) for c, v in evaluate(view, [played]))
    # An option the evaluator could not value (no sampled world took it: -inf) is left out;
    # without the played one, or without an alternative, there is nothing to say.
    values = {k: v for k, v in values.items() if math.isfinite(v)}
    coarse = {k: v for k, v in coarse.items() if k not in values and math.isfinite(v)}
    if mine not in values or len(values) + len(coarse) < 2:
        return None
    if confirm is not None and max(values.values()) - values[mine] >= INACCURACY:
        leaders = sorted(values, key=lambda k: -values[k])[:CONFIRM_TOP]
        again = [by_option.get(k, played) for k in dict.fromkeys([*leaders, mine])]
        finer = {option_key(c): v for c, v in confirm(view, again) if math.isfinite(v)}
        if mine in finer:
            values.update(finer)

    def valued(k: Key, v: float, screened: bool) -> OptionValue:
        option = cast(Command, by_option.get(k, played))
        return OptionValue(option=option, value=round(v, 4), screened=screened)

    ranked = [
        *(valued(k, v, False) for k, v in sorted(values.items(), key=lambda kv: -kv[1])),
        *(valued(k, v, True) for k, v in sorted(coarse.items(), key=lambda kv: -kv[1])),
    ]
    best = ranked[0]
    loss = max(0.0, round(max(values.values()) - values[mine], 4))
    return ReviewedDecision(
        seat=seat,
        seq=seq,
        kind=kind,
        played=cast(Command, by_option.get(mine, played)),
        best=best.option,
        loss=loss,
        mark=mark(loss),
        options=ranked,
        timeout=timeout,
    )


def _seat_review(seat: int, player: str, decisions: list[ReviewedDecision]) -> SeatReview:
    mine = [d for d in decisions if d.seat == seat]
    marks = [d.mark for d in mine]
    return SeatReview(
        seat=seat,
        player_id=player,
        decisions=len(mine),
        best=marks.count("best"),
        inaccuracies=marks.count("inaccuracy"),
        mistakes=marks.count("mistake"),
        blunders=marks.count("blunder"),
        accuracy=round(accuracy(d.loss for d in mine), 2),
        points_lost=round(sum(d.loss for d in mine), 4),
    )
