"""Auditing finished hands from their event logs: pure, no I/O (the caller reads the log).

``audit_hand(events)`` checks one hand; ``audit_hands`` many, in this process;
``audit_encoded_hands`` many given as msgspec JSON, split over worker processes.
"""

from services.audit.batch_audit import (
    AuditSummary,
    EncodedHand,
    audit_encoded_hand,
    audit_encoded_hands,
    audit_hands,
    decode_hand,
)
from services.audit.hand_audit import AuditResult, audit_hand
from services.audit.redecide import command_for

__all__ = [
    "AuditResult",
    "AuditSummary",
    "EncodedHand",
    "audit_encoded_hand",
    "audit_encoded_hands",
    "audit_hand",
    "audit_hands",
    "command_for",
    "decode_hand",
]
