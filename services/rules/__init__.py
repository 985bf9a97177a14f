"""The Blood Battle rules engine: pure, deterministic, no I/O.

The small API: ``start_hand`` → (state, events); ``legal_actions(state, seat)``;
``decide(state, command)`` → events or a ``Rejection``; ``apply(state, event)``; ``replay``.
"""

from services.rules.hand import decide, handle, legal_actions, pending_seats, start_hand
from services.rules.state import HandState, apply, replay

__all__ = [
    "HandState",
    "apply",
    "decide",
    "handle",
    "legal_actions",
    "pending_seats",
    "replay",
    "start_hand",
]
