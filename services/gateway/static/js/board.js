// Drawing a hand from a SeatView: the four seats around the centre, the caller's own hand at
// the bottom (sorted, the drawn tile apart), discards, declared groups, missing suits,
// scores and clocks. Used by the live table and by the replay viewer.
//
// Every part has a screen-reader name: seats by wind and player ("East: Computer 1"), tiles
// ("5 bamboo"), clocks ("East: 4 seconds, reserve 12 seconds"), scores and badges. The own
// hand is one toolbar: a single tab stop, ←/→/Home/End move between its tiles (a roving
// tabindex), Enter or Space acts on the focused tile.
import { respeak, spoken } from "./a11y.js";
import { formatNumber, setText, t } from "./i18n.js";
import { sortTiles, suitLabel, tileElement, tileLabel } from "./tiles.js";

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") setText(node, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

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

function meldElement(meld) {
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

// The clock of one seat: base time left, then the reserve (RULES.md §8), from ClockView;
// `text` to show, `spoken` for screen readers.
export function clockText(view, seat, serverNow, lag = 0) {
  const c = (view.clocks || [])[seat];
  if (!c) return null;
  const wind = windName(seat);
  if (c.deadline_ms === null || c.deadline_ms === undefined) {
    return {
      running: false,
      text: t("clock.reserve", { reserve: formatSeconds(c.reserve_ms) }),
      spoken: t("clock.spoken_idle", { seat: wind, reserve: Math.ceil(c.reserve_ms / 1000) }),
      urgent: false,
    };
  }
  const remaining = c.deadline_ms - serverNow - lag;
  const inWindow = view.window && view.window.pending.includes(seat);
  const usable = inWindow ? 0 : c.reserve_ms;
  const base = Math.max(0, remaining - usable);
  const reserve = Math.min(usable, Math.max(0, remaining));
  return {
    running: true,
    urgent: remaining < 3000,
    text: t("clock.running", { base: formatSeconds(base), reserve: formatSeconds(reserve) }),
    spoken: t("clock.spoken_running", { seat: wind, base: Math.ceil(base / 1000), reserve: Math.ceil(reserve / 1000) }),
    remaining,
  };
}

export function updateClock(node, clock) {
  respeak(node, clock.text, clock.spoken);
  node.classList.toggle("urgent", clock.urgent);
}

// `options`: me (the caller's seat or null), names, interactive handlers, selected tiles,
// focusKey (the hand tile that holds the tab stop).
export function renderBoard(root, view, options) {
  const { me = null, names = {}, legal = [], onTile, selected = new Set(), serverNow = Date.now(), lag = 0, focusKey = null } = options;
  root.replaceChildren();
  const bottom = me ?? 0;
  const order = [0, 1, 2, 3].map((k) => (bottom + k) % 4); // bottom, right, top, left
  const places = ["bottom", "right", "top", "left"];
  const board = h("div", { class: "board" });
  const panels = order.map((seat, k) => seatPanel(view, seat, places[k], { me, names, serverNow, lag }));
  // Reading order: your seat, then the others in turn order, then the centre.
  panels.forEach((panel) => board.append(panel));
  board.append(centre(view, { me, names, serverNow, lag }));
  root.append(h("h2", { class: "sr-only", text: t("table.board") }), board);
  const mine = view.players[bottom];
  if (me !== null && mine && mine.hand) {
    panels[0].append(handRow(view, mine, { me, legal, onTile, selected, focusKey }));
  }
  return root;
}

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

function seatPanel(view, seat, place, { me, names, serverNow, lag }) {
  const p = view.players[seat];
  const pending = view.pending.includes(seat);
  const isTurn = view.turn === seat;
  const name = playerName(p.player, names);
  const headingId = `seat-${seat}-name`;
  const panel = h("section", {
    class: `seat seat-${place} ${pending ? "is-pending" : ""} ${p.won ? "has-won" : ""} ${seat === me ? "is-me" : ""}`,
    "aria-labelledby": headingId,
    dataset: { seat: String(seat) },
  });
  const missingText = p.missing ? t("seat.missing", { suit: suitLabel(p.missing) }) : "";
  const head = h(
    "div",
    { class: "seat-head" },
    h(
      "h3",
      { class: "seat-name", id: headingId },
      h("span", { class: "seat-wind", text: windName(seat) }),
      " ",
      h("span", { text: name + (seat === me ? ` (${t("seat.you")})` : "") }),
    ),
    seat === 0 ? spoken(t("seat.dealer_short"), t("seat.dealer"), "badge dealer") : null,
    p.missing ? spoken(t("seat.missing_badge", { suit: suitLabel(p.missing) }), missingText, `badge missing missing-${p.missing}`) : null,
    p.won ? h("span", { class: "badge won", text: t("seat.won") }) : null,
    spoken(signed(p.score), t("seat.score", { score: signed(p.score) }), "seat-score"),
  );
  panel.append(head);
  const clock = clockText(view, seat, serverNow, lag);
  const status = [];
  if (pending) status.push(isTurn ? t("seat.turn") : t("seat.deciding"));
  if (view.phase === "exchange" && p.chose_exchange) status.push(t("seat.chose"));
  if (view.phase === "missing" && p.declared_missing && !p.missing) status.push(t("seat.declared"));
  let clockNode = null;
  if (clock) {
    clockNode = spoken(clock.text, clock.spoken, `clock ${clock.running ? "running" : ""} ${clock.urgent ? "urgent" : ""}`);
    clockNode.dataset.clockSeat = String(seat);
  }
  panel.append(h("div", { class: "seat-status" }, h("span", { class: "status-text", text: status.join(" · ") }), clockNode));
  if (seat !== me || !p.hand) {
    const label = p.hand ? t("seat.hand_shown", { tiles: sortTiles(p.hand).map(tileLabel).join(", ") }) : t("seat.concealed", { n: p.concealed_count });
    const concealed = h("div", { class: "concealed", role: "img", "aria-label": label });
    if (p.hand) {
      sortTiles(p.hand).forEach((tile) => concealed.append(tileElement(tile, { small: true, decorative: true })));
    } else {
      for (let i = 0; i < p.concealed_count; i++) concealed.append(tileElement(null, { small: true, extraClass: "mini", decorative: true }));
    }
    panel.append(concealed);
  }
  if (p.melds.length) {
    panel.append(h("div", { class: "melds", role: "group", "aria-label": t("seat.melds") }, p.melds.map(meldElement)));
  }
  const discards = h("div", { class: "discards", role: "group", "aria-label": t("seat.discards", { n: p.discards.length }) });
  const win = view.window;
  p.discards.forEach((tile, i) => {
    const last = win && win.kind === "discard" && win.source === seat && i === p.discards.length - 1;
    discards.append(tileElement(tile, { small: true, extraClass: last ? "last-discard" : "", label: last ? t("seat.last_discard", { tile: tileLabel(tile) }) : undefined }));
  });
  panel.append(discards);
  return panel;
}

function centre(view, { me, names, serverNow, lag }) {
  const box = h("section", { class: "centre", "aria-labelledby": "centre-title" });
  box.append(
    h("h3", { class: "sr-only", id: "centre-title", text: t("table.centre") }),
    h("div", { class: "wall", text: t("table.wall", { n: view.wall_left }) }),
    h("div", { class: "phase", dataset: { testid: "phase" }, text: phaseText(view, me, names) }),
  );
  if (view.direction) box.append(h("div", { class: "direction", text: t("table.direction", { direction: t(`direction.${view.direction}`) }) }));
  const w = view.window;
  if (w) {
    box.append(
      h(
        "div",
        { class: "window" },
        h("span", {
          text: t(w.kind === "rob" ? "table.window_rob" : "table.window_discard", {
            name: playerName(view.players[w.source].player, names),
          }),
        }),
        tileElement(w.tile),
      ),
    );
    if (me !== null && w.pending.includes(me)) {
      const c = clockText(view, me, serverNow, lag);
      if (c && c.running) box.append(h("div", { class: "countdown", "aria-hidden": "true", dataset: { countdown: "1" }, text: formatSeconds(c.remaining) }));
    }
  }
  if (view.phase === "ended") {
    box.append(h("div", { class: "ended", text: t(`end.${view.end}`) }));
  }
  return box;
}

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

function handRow(view, mine, { me, legal, onTile, selected, focusKey }) {
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
  const list = h("div", { class: "hand-tiles" });
  const nodes = [];
  const add = (tile, index, isDrawn) => {
    const canAct = me !== null && (discardable.has(tile) || exchanging) && onTile;
    const key = `${isDrawn ? "d" : "h"}${index}`;
    const isSelected = selected.has(key);
    const classes = [
      canAct ? "legal" : "",
      isSelected ? "selected" : "",
      isDrawn ? "drawn" : "",
      !canAct && onTile && (legal.length || exchanging) ? "inert" : "",
    ].join(" ");
    const label = tileLabel(tile) + (isDrawn ? `, ${t("hand.drawn")}` : "");
    const node = tileElement(tile, {
      onClick: onTile ? () => canAct && onTile(tile, key) : undefined,
      extraClass: classes,
      label,
      pressed: onTile && exchanging ? isSelected : undefined,
    });
    node.dataset.key = key;
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
