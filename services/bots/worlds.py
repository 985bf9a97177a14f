"""Possible worlds: the hidden part of a hand, sampled consistently with one seat's view.

The expert computer (``services.bots.expert``) values an option by playing it out in many
worlds. A world is a whole ``HandState`` whose hidden parts (the other seats' concealed tiles
and the wall's order) are drawn from the tiles the seat cannot see, and whose public parts
are the view's. The sample respects what the seat knows:

- the unseen tiles are exactly ``4 − own − seen`` of each type, split between the active
  opponents' concealed counts and the wall's length;
- an opponent that has shown it is clean (a discard outside its missing suit, or a declared
  group: RULES.md §3 makes the missing suit go first) holds none of its missing suit;
- the three tiles the seat passed in the exchange went to the seat the direction names, and
  that seat still holds those it has not discarded or declared;
- the tile of an open window is the one the discarder (or kong declarer) just showed.

Only ``BotView`` goes in: the world is invented from the seat's own knowledge, so playing it
out cannot leak anything the seat may not see (RULES.md §10). A world may differ from the
truth in what the view does not carry (a pass-on-win restriction of another seat, which
kong fees a not-ready seat would refund); those are small and the same for every option.
"""

from __future__ import annotations

import random

from schemas import commands as cmd
from schemas import events as ev
from services.bots.botview import BotView, MeldInfo, WinInfo
from services.bots.danger import shown_clean, threats
from services.rules import (
    DIRECTION_STEP,
    NAMES,
    NUM_TYPES,
    Deal,
    HandState,
    Meld,
    handle,
    shanten,
    start_hand,
    suit_keys,
)

KONG_FEES = {"concealed": 2, "added": 1, "exposed": 2}
"""What each kind of kong was paid, per paying seat (RULES.md §5), for the refund a world
would owe if its declarer ends not ready."""


KONG_REASONS: dict[str, ev.PaymentReason] = {
    "concealed": "concealed_kong",
    "added": "added_kong",
    "exposed": "exposed_kong",
}


class NoWorld(ValueError):
    """The sample does not fit the view (a guess the engine refuses); draw another."""


def unseen_pool(view: BotView) -> list[int]:
    """Every tile the seat cannot see, one entry per copy, in tile order.

    ``view.seen`` counts a discard two players won on in both winners' hands (it shows in
    both); here it is one tile, so one copy goes back to the unseen ones. Two wins in a row
    on the same tile from the same seat are taken as one discard won twice."""
    unseen = [view.unseen(t) for t in range(NUM_TYPES)]
    for before, after in zip(view.wins, view.wins[1:], strict=False):
        if (
            after.from_seat is not None
            and after.tile is not None
            and (after.tile, after.from_seat) == (before.tile, before.from_seat)
        ):
            unseen[after.tile] += 1
    return [t for t in range(NUM_TYPES) for _ in range(min(unseen[t], 4))]


def _passed_to(view: BotView) -> tuple[int | None, list[int]]:
    """The seat that received this seat's exchange tiles, and those it must still hold."""
    if view.direction is None or view.exchange_chosen is None:
        return None, []
    to = (view.seat + DIRECTION_STEP[view.direction]) % 4
    if view.won[to]:
        return None, []
    shown = [0] * NUM_TYPES
    for t in view.discards[to]:
        shown[t] += 1
    for m in view.melds[to]:
        shown[m.tile] += m.size
    out: list[int] = []
    for t in view.exchange_chosen:
        if shown[t]:
            shown[t] -= 1  # it may be this very tile that it discarded
        else:
            out.append(t)
    return to, out


SPLIT_TRIES = 10
"""Shuffles tried before a split that fits every opponent's known constraints is given up."""


def _deal_hidden(
    view: BotView, rng: random.Random, sizes: dict[int, int], forced: dict[int, list[int]]
) -> tuple[dict[int, list[int]], list[int]]:
    """Split the unseen tiles into the given opponents' hands and the wall (shuffled)."""
    for _ in range(SPLIT_TRIES):
        split = _split(view, rng, sizes, forced)
        if split is not None:
            hands, wall = split
            if view.phase == "play":
                wall = _shape_hands(view, rng, hands, wall)
            return hands, wall
    raise NoWorld("no split of the unseen tiles fits what the opponents have shown")


def _split(
    view: BotView, rng: random.Random, sizes: dict[int, int], forced: dict[int, list[int]]
) -> tuple[dict[int, list[int]], list[int]] | None:
    pool = unseen_pool(view)
    hands: dict[int, list[int]] = {o: [] for o in sizes}
    for o, tiles in forced.items():
        banned = view.missing[o] if _clean(view, o) else None
        for t in tiles:
            if t // 9 != banned and t in pool and len(hands[o]) < sizes[o]:
                pool.remove(t)
                hands[o].append(t)
    rng.shuffle(pool)
    # Opponents known to be clean first, from the tiles outside their missing suit; what is
    # left goes to the others and to the wall.
    order = sorted(sizes, key=lambda o: not _clean(view, o))
    for o in order:
        need = sizes[o] - len(hands[o])
        if need <= 0:
            continue
        suit = view.missing[o]
        cap = 0 if _clean(view, o) else _missing_cap(view, o)
        keep: list[int] = []
        for t in pool:
            if need and (t // 9 != suit or cap > 0):
                hands[o].append(t)
                need -= 1
                if t // 9 == suit:
                    cap -= 1
            else:
                keep.append(t)
        pool = keep
        if need:
            return None
    return hands, pool


SHAPE_TRIES = 12
"""Redraws per opponent to give its hand the shape the table suggests."""


def _shanten(view: BotView, o: int, tiles: list[int]) -> int:
    """How far an opponent's sampled hand is from ready (99: it holds its missing suit)."""
    suit = view.missing[o]
    if suit is None or any(t // 9 == suit for t in tiles):
        return 99
    counts = _counts(tiles)
    keys = suit_keys(counts)
    a, b = [x for x in range(3) if x != suit]
    return shanten(keys[a], keys[b], 4 - len(view.melds[o]))


def _shape_hands(
    view: BotView, rng: random.Random, hands: dict[int, list[int]], wall: list[int]
) -> list[int]:
    """Give each opponent a hand as near to ready as the table suggests.

    Uniformly drawn tiles make hands far worse than players build: a world where nobody is
    near ready pays the seat for staying ready at the end and never punishes a dangerous
    discard. So each opponent is ready with the chance the danger model reads from its
    play (``threats``: turns played, groups declared, shown clean), and otherwise one or two
    tiles away; its hand is redrawn from its tiles and the wall until it fits."""
    foes = {f.seat: f.ready for f in threats(view)}
    for o, tiles in hands.items():
        groups = 4 - len(view.melds[o])
        if o not in foes or len(tiles) != 3 * groups + 1:
            continue
        low, high = (0, 0) if rng.random() < foes[o] else (1, 2)
        best, best_gap = tiles, _gap(_shanten(view, o, tiles), low, high)
        combined = tiles + wall
        suit = view.missing[o]
        cap = 0 if _clean(view, o) else _missing_cap(view, o)
        for _ in range(SHAPE_TRIES):
            if best_gap == 0:
                break
            rng.shuffle(combined)
            pick: list[int] = []
            room = cap
            for t in combined:
                if len(pick) == len(tiles):
                    break
                if t // 9 == suit:
                    if room <= 0:
                        continue
                    room -= 1
                pick.append(t)
            if len(pick) < len(tiles):
                break
            gap = _gap(_shanten(view, o, pick), low, high)
            if gap < best_gap:
                best, best_gap = pick, gap
        if best is not tiles:
            left = _counts(best)
            wall = []
            for t in combined:
                if left[t]:
                    left[t] -= 1
                else:
                    wall.append(t)
            hands[o] = best
    return wall


def _gap(s: int, low: int, high: int) -> int:
    return low - s if s < low else s - high if s > high else 0


MISSING_HELD = 4
"""About how many tiles of its missing suit a player holds after the exchange (it declares
its shortest suit); each one it has shed since leaves one fewer, at least one while it has
not shown it is clean."""


def _missing_cap(view: BotView, o: int) -> int:
    """At most this many of its missing suit in an opponent's sampled hand."""
    suit = view.missing[o]
    if suit is None or view.phase != "play":
        return NUM_TYPES  # not declared yet: anything goes
    shed = sum(1 for t in view.discards[o] if t // 9 == suit)
    return max(1, MISSING_HELD - shed)


def _clean(view: BotView, o: int) -> bool:
    return view.missing[o] is not None and view.phase == "play" and shown_clean(view, o)


def sample_world(view: BotView, rng: random.Random) -> tuple[HandState, list[ev.Event]]:
    """A world consistent with the view, at the seat's pending decision; and the events that
    brought it there (the opening's, for an exchange decision; the window's, for a claim),
    which a player of the world must also see."""
    if view.phase == "exchange":
        return _opening_world(view, rng)
    return _play_world(view, rng), []


def _opening_world(view: BotView, rng: random.Random) -> tuple[HandState, list[ev.Event]]:
    me = view.seat
    sizes = {o: 13 if o else 14 for o in range(4) if o != me}
    hands, wall = _deal_hidden(view, rng, sizes, {})
    own = [t for t in range(NUM_TYPES) for _ in range(view.hand[t])]
    if view.exchange_chosen is not None:
        own.extend(view.exchange_chosen)
    dealt = tuple(tuple(own if s == me else hands[s]) for s in range(4))
    direction = rng.choice(("left", "opposite", "right"))
    return start_hand("world", view.hand_id, Deal(dealt, tuple(wall), direction))


def _play_world(view: BotView, rng: random.Random) -> HandState:
    me = view.seat
    window = view.window
    sizes = {o: view.concealed[o] for o in range(4) if o != me and not view.won[o]}
    forced: dict[int, list[int]] = {}
    to, kept = _passed_to(view)
    if to is not None and to in sizes:
        forced[to] = kept
    if window is not None and window[0] == "rob":
        # The declarer shows the tile it adds to its pung: it is in its hand, not unseen.
        sizes[window[2]] -= 1
    hands, wall = _deal_hidden(view, rng, sizes, forced)
    # A discard two players won on may be told from two separate ones only by its count;
    # should the pool hold a tile too many, the wall still has the view's length.
    wall = wall[: view.wall_left]
    s = HandState(table_id="world", hand_id=view.hand_id, phase=view.phase)
    s.players = [f"seat-{i}" for i in range(4)]
    revealed = {w.seat: _counts(list(w.hand)) for w in view.wins}
    for w in view.wins:
        if w.tile is not None and w.from_seat is not None:
            revealed[w.seat][w.tile] -= 1  # the winning discard came from the table
    for o in range(4):
        if o == me:
            tiles = view.hand
        elif view.won[o]:
            tiles = revealed.get(o, [0] * NUM_TYPES)  # a winner's hand lies open
        else:
            tiles = _counts(hands.get(o, []))
        s.counts[o] = list(tiles)
        s.keys[o] = suit_keys(s.counts[o])
        s.melds[o] = [Meld(m.kind, m.tile, m.from_seat) for m in view.melds[o]]
        s.discards[o] = list(view.discards[o])
    s.wall = wall
    s.front, s.back = 0, len(wall)
    s.direction = view.direction
    s.missing = list(view.missing)
    s.won = list(view.won)
    s.scores = list(view.scores)
    s.kong_income = _kong_income(view)
    if view.phase != "play":
        return s
    if window is None:
        s.turn = view.turn
        s.drawn = view.drawn
        if view.drawn is not None:
            s.turn_kind = "draw"
        elif not any(view.discards) and not any(view.melds):
            s.turn_kind = "first"
        else:
            s.turn_kind = "pung"
        return s
    kind, tile, source = window
    # Rewind to just before the discard (or the added kong) and let the engine open the
    # window: it asks every seat that may claim, as the live hand did.
    s.counts[source][tile] += 1
    s.keys[source] = suit_keys(s.counts[source])
    s.turn, s.turn_kind = source, "draw"
    command: cmd.HandCommand
    if kind == "discard":
        s.discards[source].pop()
        command = cmd.Discard(seat=source, tile=NAMES[tile])
    else:
        command = cmd.Kong(seat=source, tile=NAMES[tile])
    s.back += 1  # the engine refuses a kong on an empty wall; nobody draws this slot
    s.wall = [*wall, tile]
    result = handle(s, command)
    if isinstance(result, cmd.Rejection):
        raise NoWorld(f"a world could not reopen the window: {result.reason}")
    s.back -= 1
    return s


def _counts(tiles: list[int]) -> list[int]:
    out = [0] * NUM_TYPES
    for t in tiles:
        out[t] += 1
    return out


def _kong_income(view: BotView) -> list[ev.Payment]:
    """The kong fees each declarer took, as far as the view shows (who was still in is
    taken as now)."""
    out: list[ev.Payment] = []
    for seat, melds in enumerate(view.melds):
        for m in melds:
            if m.kind == "pung":
                continue
            fee = KONG_FEES[m.kind]
            if m.kind == "exposed" and m.from_seat is not None:
                payers = [m.from_seat]
            else:
                payers = [o for o in range(4) if o != seat and not view.won[o]]
            out.extend(
                ev.Payment(payer=p, payee=seat, amount=fee, reason=KONG_REASONS[m.kind])
                for p in payers
            )
    return out


def seat_views(s: HandState, wins: list[WinInfo]) -> list[BotView]:
    """Each seat's ``BotView`` of a world (the world is invented, so nothing is hidden from
    its players but each other's tiles). ``wins`` are the wins before the world began (the
    view's): a world keeps no win records of its own until it is played on."""
    seen = [0] * NUM_TYPES
    for o in range(4):
        for t in s.discards[o]:
            seen[t] += 1
        for m in s.melds[o]:
            seen[m.tile] += m.size
    for w in wins:
        for t in w.hand:
            seen[t] += 1
    window = None if s.window is None else (s.window.kind, s.window.tile, s.window.source)
    concealed = [sum(c) for c in s.counts]
    views = []
    for seat in range(4):
        v = BotView(seat=seat, hand_id=s.hand_id, phase=s.phase)
        v.hand = list(s.counts[seat])
        v.keys = list(s.keys[seat])
        v.drawn = s.drawn if s.turn == seat else None
        v.direction = s.direction
        v.missing = list(s.missing) if s.phase == "play" else [None] * 4
        if s.phase != "play":
            v.missing[seat] = s.missing[seat]
        v.concealed = list(concealed)
        v.melds = [[MeldInfo(m.kind, m.tile, m.from_seat) for m in ms] for ms in s.melds]
        v.discards = [list(d) for d in s.discards]
        v.won = list(s.won)
        v.wins = list(wins)
        v.scores = list(s.scores)
        v.wall_left = s.wall_left
        v.turn = s.turn
        v.window = window
        v.seen = list(seen)
        views.append(v)
    return views
