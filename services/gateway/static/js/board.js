// Drawing a hand from a SeatView: the four seats around the centre, the caller's own hand at
// the bottom (sorted, the drawn tile apart), discards, declared groups, missing suits,
// scores and clocks. Used by the live table and by the replay viewer.
//
// Every part has a screen-reader name: seats by wind and player ("East: Computer 1"), tiles
// ("5 bamboo"), clocks ("East: 4 seconds, reserve 12 seconds"), scores and badges. The own
// hand is one toolbar: a single tab stop, ←/→/Home/End move between its tiles (a roving
// tabindex), Enter or Space acts on the focused tile.
import { respeak, spoken } from "./a11y.js";
import { h, listen, morph } from "./dom.js";
import { formatNumber, t } from "./i18n.js";
import { MARK_SYMBOL } from "./review-state.js";
import { sortTiles, suitLabel, tileElement, tileLabel } from "./tiles.js";

export { h } from "./dom.js";

export function playerName(id, names) {
  if (!id) return "";
  if (id.startsWith("computer:")) {
    const [, strength, n] = id.split(":");
    return t("computer.name", { strength: t(`strength.${strength}`), n: Number(n) + 1 });
  }
  return (names && names[id]) || id;
}

// Seat 0 deals and sits East; the others follow South, West, North.
export function windName(seat) {
  return t(`wind.${seat}`);
}

export function seatName(view, seat, names) {
  return t("seat.label", { wind: windName(seat), name: playerName(view.players[seat] ? view.players[seat].player : "", names) });
}

export function formatSeconds(ms) {
  const s = Math.max(0, ms) / 1000;
  return s >= 10
    ? formatNumber(Math.ceil(s))
    : formatNumber(Math.floor(s * 10) / 10, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

export function meldElement(meld) {
  const group = h("span", {
    class: `meld meld-${meld.kind}`,
    role: "img",
    "aria-label": t(`meld.${meld.kind}`, { tile: tileLabel(meld.tile) }),
  });
  const size = meld.kind === "pung" ? 3 : 4;
  for (let i = 0; i < size; i++) {
    const hidden = meld.kind === "concealed" && (i === 0 || i === 3);
    group.append(tileElement(hidden ? null : meld.tile, { small: true, decorative: true }));
  }
  return group;
}

// A winner's hand as it was laid down: the concealed tiles (sorted, the winning tile apart)
// and its declared groups. The settlement and the board's win reveal draw the same.
export function winningHand(w, melds, label) {
  const tiles = sortTiles(w.hand);
  if (w.tile) {
    const at = tiles.lastIndexOf(w.tile);
    if (at >= 0) tiles.splice(at, 1);
  }
  return h(
    "div",
    { class: "win-hand", role: "img", "aria-label": label },
    h("span", { class: "win-concealed" }, tiles.map((tile) => tileElement(tile, { small: true, decorative: true }))),
    w.tile ? h("span", { class: "win-tile" }, tileElement(w.tile, { small: true, decorative: true, extraClass: "winning-tile" })) : null,
    melds.length ? h("span", { class: "win-melds", dataset: { part: "win-melds" } }, melds.map((m) => meldElement(m))) : null,
  );
}

// A winner's hand, spoken: its tiles, then its declared groups.
export function winningHandLabel(name, w, melds) {
  return t("settlement.hand_label", {
    name,
    tiles: sortTiles(w.hand).map(tileLabel).join(", "),
    melds: melds.length ? melds.map((m) => t(`meld.${m.kind}`, { tile: tileLabel(m.tile) })).join(", ") : t("settlement.no_melds"),
  });
}

// The clock of one seat: base time left, then the reserve (RULES.md §8), from ClockView;
// `text` to show, `spoken` for screen readers.
export function clockText(view, seat, serverNow, lag = 0) {
  const c = (view.clocks || [])[seat];
  if (!c) return null;
  const wind = windName(seat);
  // A hand that has ended has no running clock (a replay's last step keeps the last deadline).
  if (c.deadline_ms === null || c.deadline_ms === undefined || view.phase === "ended") {
    return {
      running: false,
      text: t("clock.reserve", { reserve: formatSeconds(c.reserve_ms) }),
      spoken: t("clock.spoken_idle", { seat: wind, reserve: Math.ceil(c.reserve_ms / 1000) }),
      urgent: false,
    };
  }
  const remaining = c.deadline_ms - serverNow - lag;
  // What of the reserve this decision may use (none for a call); older views lack the field.
  const inWindow = view.window && view.window.pending.includes(seat);
  const usable = c.usable_reserve_ms ?? (inWindow ? 0 : c.reserve_ms);
  const base = Math.max(0, remaining - usable);
  const reserve = Math.min(usable, Math.max(0, remaining));
  return {
    running: true,
    urgent: remaining < 3000,
    text: t("clock.running", { base: formatSeconds(base), reserve: formatSeconds(reserve) }),
    stacked: t("clock.running_stacked", { base: formatSeconds(base), reserve: formatSeconds(reserve) }),
    spoken: t("clock.spoken_running", { seat: wind, base: Math.ceil(base / 1000), reserve: Math.ceil(reserve / 1000) }),
    remaining,
  };
}

// A side plate is narrow: its running clock stands on two lines (base, then "+ reserve").
function plateClock(clock, side) {
  return side && clock.stacked ? clock.stacked : clock.text;
}

export function updateClock(node, clock) {
  respeak(node, plateClock(clock, Boolean(node.closest && node.closest(".plate-left, .plate-right"))), clock.spoken);
  node.classList.toggle("urgent", clock.urgent);
}

// The table as players know it: the caller's seat at the bottom, the others right, across
// and left in turn order; each seat's river (its discards, rows of six) in front of it around
// the centre panel (wall, dealer, exchange direction, missing suits, scores, clocks).
// `options`: me (the caller's seat or null), names, interactive handlers, selected tiles,
// focusKey (the hand tile that holds the tab stop), lastDiscard ({seat}: mark that seat's
// newest discard), received (tiles received in the exchange, highlighted), hints (per tile:
// a short text shown under a candidate discard), replay (a replay: the seat at the bottom is
// shown, not played, so no "you" and no prompt), marks (a replay with its computer review:
// {seat: mark} of the step's decisions, a badge on each seat's name).
export function renderBoard(root, view, options) {
  const { me = null, names = {}, serverNow = Date.now(), lag = 0 } = options;
  const bottom = me ?? 0;
  const order = [0, 1, 2, 3].map((k) => (bottom + k) % 4); // bottom, right, top, left
  const places = ["bottom", "right", "top", "left"];
  const board = h("div", { class: `board ${view.phase === "ended" ? "is-ended" : ""}`, dataset: { part: "board", phase: view.phase } });
  // Reading order: your seat, then the others in turn order (each with its river), then the
  // centre.
  order.forEach((seat, k) => {
    board.append(seatPanel(view, seat, places[k], options));
    board.append(river(view, seat, places[k], options));
  });
  board.append(centre(view, order, places, { me, names, serverNow, lag }));
  morph(root, [h("h2", { class: "sr-only", id: "board-title", text: t("table.board") }), board]);
  return root;
}

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

function seatPanel(view, seat, place, options) {
  const { me, names, replay = false } = options;
  const p = view.players[seat];
  const you = seat === me && !replay;
  const pending = view.pending.includes(seat);
  const isTurn = view.turn === seat;
  const name = playerName(p.player, names);
  const headingId = `seat-${seat}-name`;
  const panel = h("section", {
    class: `seat seat-${place} ${pending ? "is-pending" : ""} ${p.won ? "has-won" : ""} ${seat === me ? "is-me" : ""} ${isTurn ? "is-turn" : ""}`,
    "aria-labelledby": headingId,
    dataset: { seat: String(seat), part: `seat-${seat}` },
  });
  const status = [];
  if (pending) status.push(isTurn ? t("seat.turn") : t("seat.deciding"));
  if (view.phase === "exchange" && p.chose_exchange) status.push(t("seat.chose"));
  if (view.phase === "missing" && p.declared_missing && !p.missing) status.push(t("seat.declared"));
  panel.append(
    h(
      "div",
      { class: "seat-head" },
      h(
        "h3",
        { class: "seat-name", id: headingId },
        h("span", { class: "seat-wind", text: windName(seat) }),
        " ",
        h("span", { class: "seat-player", title: name, text: name + (you ? ` (${t("seat.you")})` : "") }),
      ),
      p.won ? h("span", { class: "badge won", text: t("seat.won") }) : null,
      options.marks && options.marks[seat] ? reviewMark(options.marks[seat]) : null,
      // The player's own line says what the table waits for (what to do, or for whom).
      you ? h("span", { class: "phase", dataset: { testid: "phase" }, text: phaseText(view, me, names) }) : h("span", { class: "status-text", text: status.join(" · ") }),
    ),
  );
  const tiles = h("div", { class: "seat-tiles" });
  const win = p.won ? (view.wins || []).find((w) => w.seat === seat) : null;
  if (win) {
    // The win reveal: the hand laid down as it won, its declared groups beside it.
    tiles.append(winningHand(win, p.melds, winningHandLabel(name, win, p.melds)));
  } else if (seat !== me || !p.hand) {
    const label = p.hand ? t("seat.hand_shown", { tiles: sortTiles(p.hand).map(tileLabel).join(", ") }) : t("seat.concealed", { n: p.concealed_count });
    const concealed = h("div", { class: `concealed ${p.hand ? "shown" : ""}`, role: "img", "aria-label": label });
    if (p.hand) {
      sortTiles(p.hand).forEach((tile) => concealed.append(tileElement(tile, { small: true, decorative: true })));
    } else {
      for (let i = 0; i < p.concealed_count; i++) concealed.append(tileElement(null, { small: true, extraClass: "mini", decorative: true }));
      concealed.append(h("span", { class: "concealed-count", "aria-hidden": "true", text: `×${p.concealed_count}` }));
    }
    tiles.append(concealed);
  } else {
    tiles.append(handRow(view, p, options));
  }
  if (p.melds.length && !win) {
    tiles.append(h("div", { class: "melds", role: "group", "aria-label": t("seat.melds") }, p.melds.map(meldElement)));
  }
  panel.append(tiles);
  const call = options.callouts && options.callouts[seat];
  if (call) panel.append(h("span", { class: "callout", lang: "zh-Hans", "aria-hidden": "true", dataset: { part: "callout" }, text: call }));
  return panel;
}

// A reviewed decision's mark on its seat (the computer review in a replay).
function reviewMark(mark) {
  const word = t(`review.mark.${mark}`);
  return h(
    "span",
    { class: `review-mark mark-${mark}`, title: word, dataset: { part: "review-mark", mark } },
    h("span", { "aria-hidden": "true", text: MARK_SYMBOL[mark] }),
    h("span", { class: "sr-only", text: word }),
  );
}

// A seat's discards in front of it, in rows of six from the centre outwards.
function river(view, seat, place, { lastDiscard = null, names }) {
  const p = view.players[seat];
  const box = h("div", {
    class: `discards river river-${place}`,
    role: "group",
    "aria-label": `${seatName(view, seat, names)}: ${t("seat.discards", { n: p.discards.length })}`,
    dataset: { part: `river-${seat}` },
  });
  const win = view.window;
  const markSeat = win && win.kind === "discard" ? win.source : lastDiscard ? lastDiscard.seat : null;
  p.discards.forEach((tile, i) => {
    const last = markSeat === seat && i === p.discards.length - 1;
    const node = tileElement(tile, { small: true, extraClass: last ? "last-discard" : "", label: last ? t("seat.last_discard", { tile: tileLabel(tile) }) : undefined });
    node.dataset.key = `r${i}`;
    box.append(node);
  });
  return box;
}

// The centre panel: the wall and the offered tile in the middle, and at each edge the plate
// of the seat on that side (wind, dealer, score, missing suit, clock).
function centre(view, order, places, { me, names, serverNow, lag }) {
  const box = h("section", { class: "centre", "aria-labelledby": "centre-title", dataset: { part: "centre" } });
  box.append(h("h3", { class: "sr-only", id: "centre-title", text: t("table.centre") }));
  order.forEach((seat, k) => box.append(plate(view, seat, places[k], { serverNow, lag })));
  const mid = h("div", { class: "centre-mid" });
  mid.append(h("div", { class: "wall" }, spoken(String(view.wall_left), t("table.wall", { n: view.wall_left }), "wall-count"), h("span", { class: "wall-label", "aria-hidden": "true", text: t("table.wall_short") })));
  if (view.direction) {
    // The arrow and the words apart, so that a phone's narrow panel can keep the arrow alone.
    const name = t(`direction.${view.direction}`);
    mid.append(
      h("span", { class: "direction" },
        spoken(DIRECTION_ARROW[view.direction], t("table.direction", { direction: name }), "direction-arrow"),
        h("span", { class: "direction-name", "aria-hidden": "true", text: ` ${name}` })),
    );
  }
  const w = view.window;
  if (w) {
    mid.append(
      h(
        "div",
        { class: "window" },
        h("span", {
          class: "window-text",
          text: t(w.kind === "rob" ? "table.window_rob" : "table.window_discard", {
            name: playerName(view.players[w.source].player, names),
          }),
        }),
        tileElement(w.tile, { small: true }),
      ),
    );
    if (me !== null && w.pending.includes(me)) {
      const c = clockText(view, me, serverNow, lag);
      if (c && c.running) mid.append(h("div", { class: "countdown", "aria-hidden": "true", dataset: { countdown: "1" }, text: formatSeconds(c.remaining) }));
    }
  }
  if (view.phase === "ended") mid.append(h("div", { class: "ended", text: t(`end.${view.end}`) }));
  box.append(mid);
  return box;
}

const DIRECTION_ARROW = { right: "→", opposite: "↕", left: "←" };

function plate(view, seat, place, { serverNow, lag }) {
  const p = view.players[seat];
  const pending = view.pending.includes(seat);
  const node = h("div", { class: `plate plate-${place} ${pending ? "is-pending" : ""} ${view.turn === seat ? "is-turn" : ""}`, dataset: { part: `plate-${seat}` } });
  node.append(h("span", { class: "plate-wind", "aria-hidden": "true", text: t(`wind.short.${seat}`) }));
  if (seat === 0) node.append(spoken(t("seat.dealer_short"), t("seat.dealer"), "badge dealer"));
  node.append(spoken(signed(p.score), `${windName(seat)}: ${t("seat.score", { score: signed(p.score) })}`, "seat-score"));
  if (p.missing) node.append(spoken(SUIT_MARK[p.missing], `${windName(seat)}: ${t("seat.missing", { suit: suitLabel(p.missing) })}`, `badge missing missing-${p.missing}`));
  const clock = clockText(view, seat, serverNow, lag);
  if (clock) {
    const c = spoken(plateClock(clock, place === "left" || place === "right"), clock.spoken, `clock ${clock.running ? "running" : ""} ${clock.urgent ? "urgent" : ""}`);
    c.dataset.clockSeat = String(seat);
    node.append(c);
  }
  return node;
}

// The missing suit's mark: its Chinese name, as on Sichuan tables (萬 characters, 筒 circles,
// 条 bamboo); screen readers hear the suit's name.
const SUIT_MARK = { m: "萬", p: "筒", s: "条" };

export function phaseText(view, me, names) {
  if (view.phase === "ended") return t("phase.ended");
  if (view.phase === "exchange") return me !== null && view.pending.includes(me) ? t("phase.exchange_you") : t("phase.exchange_wait");
  if (view.phase === "missing") return me !== null && view.pending.includes(me) ? t("phase.missing_you") : t("phase.missing_wait");
  if (view.window) {
    if (me !== null && view.window.pending.includes(me)) return t("phase.window_you", { tile: tileLabel(view.window.tile) });
    return t("phase.window_wait");
  }
  if (view.turn !== null && view.turn !== undefined) {
    if (view.turn === me) return t("phase.turn_you");
    return t("phase.turn_other", { name: playerName(view.players[view.turn].player, names) });
  }
  return "";
}

function handRow(view, mine, { me, legal = [], onTile, selected = [], focusKey = null, keepsReady = [], onHint = null }) {
  const row = h("div", {
    class: "my-hand",
    role: onTile ? "toolbar" : "group",
    "aria-label": t("hand.label", { n: mine.hand.length }),
  });
  const tiles = sortTiles(mine.hand);
  let drawn = null;
  if (view.drawn) {
    const at = tiles.lastIndexOf(view.drawn);
    if (at >= 0) drawn = tiles.splice(at, 1)[0];
  }
  const discardable = new Set(legal.filter((c) => c.type === "discard").map((c) => c.tile));
  const exchanging = legal.some((c) => c.type === "choose_exchange");
  // The three tiles received in the exchange stay marked until the player's first discard.
  const received = [...(view.exchange_received && !mine.discards.length && view.phase !== "exchange" ? view.exchange_received : [])];
  const list = h("div", { class: "hand-tiles" });
  const nodes = [];
  const add = (tile, index, isDrawn) => {
    const canAct = me !== null && (discardable.has(tile) || exchanging) && onTile;
    const key = `${isDrawn ? "d" : "h"}${index}`;
    const isSelected = Array.isArray(selected) ? selected.includes(key) : selected.has(key);
    const at = received.indexOf(tile);
    const isReceived = at >= 0 && !isDrawn;
    if (isReceived) received.splice(at, 1);
    const isMissing = mine.missing && tile[1] === mine.missing;
    // The waits help: discarding this tile keeps the hand ready (a 听 marker on the tile).
    const keeps = keepsReady.includes(tile);
    const classes = [
      keeps ? "keeps-ready" : "",
      isReceived ? "received" : "",
      isMissing ? "missing-suit" : "",
      canAct ? "legal" : "",
      isSelected ? "selected" : "",
      isDrawn ? "drawn" : "",
      !canAct && onTile && (legal.length || exchanging) ? "inert" : "",
    ].join(" ");
    const label =
      tileLabel(tile) +
      (isDrawn ? `, ${t("hand.drawn")}` : "") +
      (isReceived ? `, ${t("hand.received")}` : "") +
      (isMissing ? `, ${t("hand.missing_suit")}` : "") +
      (keeps ? `, ${t("waits.keeps_ready")}` : "");
    const node = tileElement(tile, {
      onClick: onTile ? () => canAct && onTile(tile, key) : undefined,
      extraClass: classes,
      label,
      pressed: onTile && exchanging ? isSelected : undefined,
    });
    node.dataset.key = key;
    if (onHint) {
      listen(node, "pointerenter", () => onHint(tile));
      listen(node, "pointerleave", () => onHint(null));
    }
    if (onTile) {
      if (!canAct) node.setAttribute("aria-disabled", "true");
      node.tabIndex = -1;
      nodes.push(node);
    }
    return node;
  };
  tiles.forEach((tile, i) => list.append(add(tile, i, false)));
  row.append(list);
  if (drawn) row.append(h("div", { class: "drawn-slot" }, add(drawn, 0, true)));
  // One tab stop: the remembered tile, else the drawn one if it may be played, else the first
  // tile that may be played, else the first.
  const stop =
    nodes.find((n) => n.dataset.key === focusKey) ||
    nodes.find((n) => n.classList.contains("drawn") && n.classList.contains("legal")) ||
    nodes.find((n) => n.classList.contains("legal")) ||
    nodes[0];
  if (stop) stop.tabIndex = 0;
  return row;
}
