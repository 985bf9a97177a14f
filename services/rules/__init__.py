"""The Blood Battle rules engine: pure, deterministic, no I/O. The one way services reach it.

One module per section of ``../shared/RULES.md`` (docs/architecture.md has the table);
services import from here only, never a submodule (tests/unit/test_architecture.py).

The hand:
    ``start_hand(table_id, hand_id, deal, ...)`` → (state, opening events);
    ``decide(state, command)`` → events or a ``Rejection`` (pure); ``handle`` the same, in
    place, for the hand's single writer; ``apply(state, event)``, ``replay(events)``;
    ``legal_actions(state, seat)``, ``pending_seats(state)``; ``HandState``, ``ReplayError``;
    ``Meld``, a declared group as ``HandState.melds`` records it.
§1 tiles, seats and the shuffle: ``NAMES``, ``INDEX``, ``SUITS``, ``NUM_TYPES``,
    ``format_tiles``, ``DIRECTION_STEP``, ``shuffle``, ``Deal``, ``commitment``, ``SEED_BYTES``.
§4 fan, for bots and hints: ``POW5``, ``suit_keys``, ``winning_tiles``; how far from ready
    (``readiness``): ``shanten``, ``standard_shanten``, ``splits``, ``Split``, ``pairs``,
    ``digit``, ``vector_id``, ``value_vector``.
§7 ``placements``. §8 clocks: ``PRESETS``, ``tick``, ``check_time``, ``clocks_started``.
§9 tables: ``seating_problem``, ``table_problem``, ``rated``, ``COMPUTER``, ``is_computer``,
    ``first_seats``, ``next_seats``.
§10 what each seat may see: ``seat_view``, ``seen``, ``seen_events``, ``hand_over``,
    ``open_view`` (an ended hand's replay); ``waits_help`` (the waits help a seat's own view
    carries, from that view alone).
Tools: ``run_scenario`` and ``first_difference`` (conformance scenarios); ``random_seed`` and
    ``connectedness`` (self-play).
"""

from services.rules.clock import PRESETS, check_time, clocks_started, tick
from services.rules.fan import POW5, suit_keys, winning_tiles
from services.rules.hand import apply, decide, handle, legal_actions, replay, start_hand
from services.rules.placement import placements
from services.rules.readiness import (
    Split,
    digit,
    pairs,
    shanten,
    splits,
    standard_shanten,
    value_vector,
    vector_id,
)
from services.rules.scenario import first_difference
from services.rules.scenario import run as run_scenario
from services.rules.selfplay import connectedness, random_seed
from services.rules.shuffle import SEED_BYTES, Deal, commitment, shuffle
from services.rules.state import HandState, Meld, ReplayError, pending_seats
from services.rules.table import (
    COMPUTER,
    first_seats,
    is_computer,
    next_seats,
    rated,
    seating_problem,
    table_problem,
)
from services.rules.tiles import DIRECTION_STEP, INDEX, NAMES, NUM_TYPES, SUITS, format_tiles
from services.rules.visibility import hand_over, open_view, seat_view, seen, seen_events
from services.rules.waits import waits_help

__all__ = [
    "COMPUTER",
    "DIRECTION_STEP",
    "INDEX",
    "NAMES",
    "NUM_TYPES",
    "POW5",
    "PRESETS",
    "SEED_BYTES",
    "SUITS",
    "Deal",
    "HandState",
    "Meld",
    "ReplayError",
    "Split",
    "apply",
    "check_time",
    "clocks_started",
    "commitment",
    "connectedness",
    "decide",
    "digit",
    "first_difference",
    "first_seats",
    "format_tiles",
    "hand_over",
    "handle",
    "is_computer",
    "legal_actions",
    "next_seats",
    "open_view",
    "pairs",
    "pending_seats",
    "placements",
    "random_seed",
    "rated",
    "replay",
    "run_scenario",
    "seat_view",
    "seating_problem",
    "seen",
    "seen_events",
    "shanten",
    "shuffle",
    "splits",
    "standard_shanten",
    "start_hand",
    "suit_keys",
    "table_problem",
    "tick",
    "value_vector",
    "vector_id",
    "waits_help",
    "winning_tiles",
]
