"""Every code the server sends a client when it refuses something: one closed, typed set.

A refusal carries a stable ``code``, its ``params`` and an English ``reason`` (for logs and
tests). Clients translate by code: the web client's message for ``code`` is
``error.<code>`` in ``services/gateway/static/i18n/{en,de}.json``, and may use only the
parameters ``PARAMS`` names for it. Each place that refuses takes one of the ``Literal``
types below, so ``mypy`` rejects a code that is not here; the published JSON Schemas list
them (an ``enum``). A code is written here once, under the part that first sends it; a part
that passes on another's refusals takes theirs too (the table service passes on the rules
engine's, the gateway everyone's).

Adding a code (docs/gateway.md, "Codes"): add it to its part's ``Literal`` and to
``PARAMS`` with the parameters every place sending it fills in, add ``error.<code>`` to both
catalogues, and run ``make schemas``. ``tests/unit/test_codes.py`` holds ``PARAMS`` to every
place that sends a code; ``tests/service/test_gateway_i18n.py`` holds the catalogues to it.
"""

from __future__ import annotations

import typing
from typing import Literal

RuleCode = Literal[
    # a command the rules engine refuses (services/rules: RULES.md §2-§8; schemas.commands)
    "already_chosen",
    "already_declared",
    "already_paused",
    "already_responded",
    "already_won",
    "awaiting_responses",
    "bad_seat",
    "bad_suit",
    "bad_tile",
    "discard_only",
    "exchange_needs_three",
    "exchange_one_suit",
    "hand_over",
    "hand_paused",
    "holding_missing",
    "last_discard",
    "must_discard_missing",
    "no_kong",
    "no_pending_decision",
    "no_pung",
    "no_window",
    "not_asked",
    "not_complete",
    "not_due",
    "not_exchange_phase",
    "not_missing_phase",
    "not_paused",
    "not_started",
    "not_your_turn",
    "opening_not_done",
    "pause_not_allowed",
    "pung_blocked",
    "rob_only_hu",
    "stale_decision",
    "stale_hand",
    "tile_not_held",
    "time_up",
    "unknown_command",
    "unreadable_action",  # a scenario's action that is no command
    "untimed",
    "wall_empty",
    "win_blocked",
]

SeatingCode = Literal[
    # a table RULES.md §9 does not allow; refused by matchmaking and by the table service
    "rated_needs_clock",
    "rated_needs_humans",
]

TableCode = (
    RuleCode
    | SeatingCode
    | Literal[
        # a command or start the table service refuses (schemas.table.CommandRejected)
        "duplicate",
        "hand_in_progress",
        "need_four_players",
        "no_hand",
        "table_unavailable",
        "unknown_clock",
        "unknown_pace",
    ]
)

LobbyCode = (
    SeatingCode
    | Literal[
        # a request matchmaking refuses (schemas.lobby.RequestRefused)
        "already_seated",
        "in_queue",
        "malformed",
        "no_computers",
        "no_such_table",
        "not_between_hands",
        "not_creator",
        "not_in_queue",
        "not_seated",
        "table_full",
        "table_started",
        "untimed_hand",
    ]
)

AccountCode = Literal[
    # an account operation the gateway refuses (services.gateway.accounts.AccountError)
    "already_registered",
    "bad_credentials",
    "bad_password",
    "no_guest_name",
    "too_many_attempts",
    # a display name the gateway refuses (services.gateway.names.NameRefused; the taken name
    # from the account store)
    "name_bad_character",
    "name_mixed_digits",
    "name_mixed_scripts",
    "name_needs_letter",
    "name_spaces",
    "name_taken",
    "name_too_long",
    "name_too_short",
    "reserved_name",
]

GatewayCode = Literal[
    # REST answers (services.gateway.api.ApiError, limits, the app's start)
    "admin_disabled",
    "bad_kind",
    "bad_offset",
    "bad_path",
    "bad_request",
    "bad_wait",
    "hand_not_ended",
    "hand_not_over",
    "internal",
    "matchmaking_unavailable",
    "method_not_allowed",
    "no_such_hand",
    "no_such_player",
    "not_found",
    "not_in_hand",
    "rate_limited",
    "review_not_found",
    "starting",
    "too_deep",
    "too_large",
    "unauthorized",
    # WebSocket error frames and close reasons (services.gateway.connection, protocol)
    "bad_command",
    "bad_frame",
    "closed",
    "flood",
    "forbidden",
    "forbidden_command",
    "hello_timeout",
    "not_a_player",
    "not_your_seat",
    "opened_elsewhere",
    "server_error",
    "session_ended",
    "session_expired",
    "session_unchecked",
    "slow_client",
    "table_closed",
    "too_many_sockets",
    "unsupported_version",
]

Code = TableCode | LobbyCode | AccountCode | GatewayCode
"""Every code; what the gateway, which passes on every part's refusals, may send."""


def members(alias: object) -> frozenset[str]:
    """The strings of a ``Literal`` type alias, through unions of them."""
    args = typing.get_args(alias)
    if typing.get_origin(alias) is Literal:
        return frozenset(a for a in args if isinstance(a, str))
    return frozenset().union(*(members(a) for a in args))


CODES: frozenset[str] = members(Code)

PARAMS: dict[Code, tuple[str, ...]] = {
    # The parameters every place sending the code fills in; a message may use these only.
    # Some places add more (``bad_seat`` with the ``seat``, ``rate_limited`` with ``per_s``
    # on a socket, ``retry_after_s`` over REST): a message cannot rely on those.
    "already_chosen": ("seat",),
    "already_declared": ("seat",),
    "already_paused": ("seat",),
    "already_responded": ("seat",),
    "already_won": ("seat",),
    "awaiting_responses": ("seat",),
    "bad_seat": (),
    "bad_suit": ("suit",),
    "bad_tile": ("tile",),
    "discard_only": (),
    "exchange_needs_three": (),
    "exchange_one_suit": (),
    "hand_over": (),
    "hand_paused": (),
    "holding_missing": (),
    "last_discard": (),
    "must_discard_missing": ("suit",),
    "no_kong": ("tile",),
    "no_pending_decision": ("seat",),
    "no_pung": ("tile",),
    "no_window": (),
    "not_asked": ("seat", "tile"),
    "not_complete": (),
    "not_due": ("due_in_ms",),
    "not_exchange_phase": (),
    "not_missing_phase": (),
    "not_paused": ("seat",),
    "not_started": (),
    "not_your_turn": ("seat",),
    "opening_not_done": (),
    "pause_not_allowed": ("seat",),
    "pung_blocked": ("tile",),
    "rob_only_hu": (),
    "stale_decision": ("decision_seq",),
    "stale_hand": ("hand",),
    "tile_not_held": (),
    "time_up": ("late_ms",),
    "unknown_command": (),
    "unreadable_action": (),
    "untimed": ("seat",),
    "wall_empty": (),
    "win_blocked": (),
    # seating
    "rated_needs_clock": (),
    "rated_needs_humans": (),
    # table service
    "duplicate": (),
    "hand_in_progress": (),
    "need_four_players": (),
    "no_hand": (),
    "table_unavailable": (),
    "unknown_clock": (),
    "unknown_pace": (),
    # matchmaking
    "already_seated": ("table_id",),
    "in_queue": (),
    "malformed": (),
    "no_computers": (),
    "no_such_table": ("table_id",),
    "not_between_hands": (),
    "not_creator": (),
    "not_in_queue": (),
    "not_seated": ("table_id",),
    "table_full": ("table_id",),
    "table_started": ("table_id",),
    "untimed_hand": (),
    # accounts
    "already_registered": (),
    "bad_credentials": (),
    "bad_password": ("max", "min"),
    "no_guest_name": (),
    "too_many_attempts": ("retry_after_s",),
    # display names
    "name_bad_character": ("char", "codepoint"),
    "name_mixed_digits": (),
    "name_mixed_scripts": (),
    "name_needs_letter": (),
    "name_spaces": (),
    "name_taken": (),
    "name_too_long": ("max",),
    "name_too_short": ("min",),
    "reserved_name": (),
    # gateway: REST
    "admin_disabled": (),
    "bad_kind": ("kind",),
    "bad_offset": (),
    "bad_path": (),
    "bad_request": (),
    "bad_wait": ("max", "min"),
    "hand_not_ended": ("hand_id",),
    "hand_not_over": ("hand_id",),
    "internal": (),
    "matchmaking_unavailable": (),
    "method_not_allowed": (),
    "no_such_hand": ("hand_id",),
    "no_such_player": ("player",),
    "not_found": (),
    "not_in_hand": (),
    "rate_limited": (),
    "review_not_found": ("hand_id",),
    "starting": (),
    "too_deep": (),
    "too_large": (),
    "unauthorized": (),
    # gateway: WebSocket
    "bad_command": (),
    "bad_frame": (),
    "closed": (),
    "flood": (),
    "forbidden": (),
    "forbidden_command": (),
    "hello_timeout": (),
    "not_a_player": (),
    "not_your_seat": ("seat",),
    "opened_elsewhere": (),
    "server_error": (),
    "session_ended": (),
    "session_expired": (),
    "session_unchecked": (),
    "slow_client": (),
    "table_closed": (),
    "too_many_sockets": (),
    "unsupported_version": ("client", "server"),
}
