"""Who may see and do what at a table: the gateway's one access policy.

Every route and the socket ask here; none decides access itself. The policy reads the
lobby's read model (``LobbyWatcher``) and the hand's players, nothing else, and answers with
a decision; the caller turns a refusal into its own answer (HTTP 404, a closing socket).

- **The lobby's word on a table** (``GET /api/tables/{id}``): a public table for everyone,
  open, in play or closed; a private one for those sitting at it (``Watch.seated``). A private
  table anyone else asks about answers exactly as a table that does not exist.
- **Watching** (the socket's ``hello``): a player of the table (seated in the lobby, or in its
  current hand) as ``player``; anyone else as ``spectator`` if the table is public. An ended
  public table says so (``table_closed``); an ended private one looks missing (``forbidden``).
  A spectator, and a player not in the current hand, get the hand only at a public table.
- **A hand** (``GET /api/tables/{id}/view``, ``/api/hands/{id}/export`` and ``/replay``): its
  players, as their seat; anyone as a spectator while the hand's table is public, and once
  the hand has ended if its table was public (a shared replay link); a private table's
  hands only ever to their players. Otherwise it answers as a hand that does not exist.
- **Driving a seat** (``command`` frames): only the account's own seat in the current hand.
  Who sits in the hand is the hand's log (``hand_started.seats``), not the lobby.
- **Lists** filter by their own queries: the lobby lists public tables that are not Quick
  Play (``LobbyWatcher.public_tables``); a player's hands list a private table's hands only to
  those who played them too (the hand-history store, ``services/history``).
- **Sitting down, leaving, playing again, filling with computers**: matchmaking's decision
  (RULES.md §9), refused there (409 with its code); the gateway only forwards the request for
  the authenticated account.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from services.gateway.lobby import LobbyWatcher


def seat_in(players: Sequence[str], player: str) -> int | None:
    """``player``'s seat in a hand of ``players`` (seat order); None: not one of them. The
    only seat an account may drive."""
    return players.index(player) if player in players else None


@dataclass(frozen=True, slots=True)
class Watch:
    """What one account is to one table, as the lobby and the current hand say."""

    seated: bool  # at the table in the lobby: sitting down, or a player of its hand
    playing: bool  # one of the current hand's players
    public: bool  # a public table the lobby still holds
    closed_public: bool  # an ended table that was public

    @property
    def sees_table(self) -> bool:
        """Whether the lobby's word on the table may be shown (else: no such table)."""
        return self.seated or self.public or self.closed_public

    @property
    def role(self) -> Literal["player", "spectator"] | None:
        """How the socket watches: None: it may not."""
        if self.seated or self.playing:
            return "player"
        return "spectator" if self.public else None

    @property
    def refusal(self) -> Literal["table_closed", "forbidden"]:
        """Why a socket that may not watch is closed."""
        return "table_closed" if self.closed_public else "forbidden"

    def sees_hand(self, seat: int | None) -> bool:
        """Whether the socket is sent the current hand (as ``seat``; None: as a spectator)."""
        return seat is not None or self.public


def watch(
    lobby: LobbyWatcher, table_id: str, player: str, hand_players: Sequence[str] = ()
) -> Watch:
    """``player`` and ``table_id``; ``hand_players``: the current hand's seats, if any."""
    t = lobby.table(table_id)
    return Watch(
        seated=t is not None and (player in t.seated or player in t.players),
        playing=player in hand_players,
        public=t is not None and t.options.public,
        closed_public=t is None
        and table_id in lobby.closed
        and table_id not in lobby.closed_private,
    )


def table_public(lobby: LobbyWatcher, table_id: str) -> bool | None:
    """Whether a table is or was public, as the lobby remembers it (None: it has forgotten
    the table; the hand history still knows, ``services/history``)."""
    t = lobby.table(table_id)
    if t is not None:
        return t.options.public
    if table_id in lobby.closed:
        return table_id not in lobby.closed_private
    return None


def hand_seat(
    lobby: LobbyWatcher,
    table_id: str,
    players: Sequence[str],
    over: bool,
    player: str,
    public: bool | None = None,
) -> tuple[bool, int | None]:
    """Whether ``player`` may see a hand of ``table_id`` with ``players`` (``over``: it has
    ended), and as which seat (None: as a spectator). ``public``: the table's privacy when
    the lobby no longer knows it (the hand history's word); a table nobody knows anything
    about counts as public, as in the hand history."""
    seat = seat_in(players, player)
    if seat is not None:
        return True, seat
    if over:
        known = table_public(lobby, table_id)
        return (known if known is not None else public is not False), None
    t = lobby.table(table_id)
    return t is not None and t.options.public, None
