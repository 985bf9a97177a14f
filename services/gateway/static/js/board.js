// Drawing a hand from a SeatView: the four seats around the centre, the caller's own hand at
// the bottom (sorted, the drawn tile apart), discards, declared groups, missing suits,
// scores and clocks. Used by the live table and by the replay viewer.
import { t } from "./i18n.js";
import { sortTiles, suitLabel, tileElement, tileLabel } from "./tiles.js";

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
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

export function formatSeconds(ms) {
  const s = Math.max(0, ms) / 1000;
  return s >= 10 ? `${Math.ceil(s)}` : s.toFixed(1);
}

function meldElement(meld) {
  const group = h("span", {
    class: `meld meld-${meld.kind}`,
    role: "group",
    "aria-label": t(`meld.${meld.kind}`, { tile: tileLabel(meld.tile) }),
  });
  const size = meld.kind === "pung" ? 3 : 4;
  for (let i = 0; i < size; i++) {
    const hidden = meld.kind === "concealed" && (i === 0 || i === 3);
    group.append(tileElement(hidden ? null : meld.tile, { small: true }));
  }
  return group;
}

// The clock of one seat: base time left, then the reserve (RULES.md §8), from ClockView.
export function clockText(view, seat, serverNow, lag = 0) {
  const c = (view.clocks || [])[seat];
  if (!c) return null;
  if (c.deadline_ms === null || c.deadline_ms === undefined) {
    return { running: false, text: t("clock.reserve", { reserve: formatSeconds(c.reserve_ms) }), urgent: false };
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
    remaining,
  };
}

// `options`: me (the caller's seat or null), names, interactive handlers, selected tiles.
export function renderBoard(root, view, options) {
  const { me = null, names = {}, legal = [], onTile, selected = new Set(), serverNow = Date.now(), lag = 0 } = options;
  root.replaceChildren();
  const bottom = me ?? 0;
  const order = [0, 1, 2, 3].map((k) => (bottom + k) % 4); // bottom, right, top, left
  const places = ["bottom", "right", "top", "left"];
  const board = h("div", { class: "board", role: "region", "aria-label": t("table.board") });
  const panels = order.map((seat, k) => seatPanel(view, seat, places[k], { me, names, serverNow, lag }));
  panels.forEach((panel) => board.append(panel));
  board.append(centre(view, { me, names, serverNow, lag }));
  root.append(board);
  const mine = view.players[bottom];
  if (me !== null && mine && mine.hand) {
    panels[0].append(handRow(view, mine, { me, legal, onTile, selected }));
  }
  return root;
}

function seatPanel(view, seat, place, { me, names, serverNow, lag }) {
  const p = view.players[seat];
  const pending = view.pending.includes(seat);
  const isTurn = view.turn === seat;
  const panel = h("section", {
    class: `seat seat-${place} ${pending ? "is-pending" : ""} ${p.won ? "has-won" : ""} ${seat === me ? "is-me" : ""}`,
    "aria-label": t("seat.label", { name: playerName(p.player, names), seat: seat + 1 }),
    dataset: { seat: String(seat) },
  });
  const head = h(
    "div",
    { class: "seat-head" },
    h("span", { class: "seat-name", text: playerName(p.player, names) + (seat === me ? ` (${t("seat.you")})` : "") }),
    seat === 0 ? h("span", { class: "badge dealer", title: t("seat.dealer"), text: t("seat.dealer_short") }) : null,
    p.missing
      ? h("span", {
          class: `badge missing missing-${p.missing}`,
          "aria-label": t("seat.missing", { suit: suitLabel(p.missing) }),
          title: t("seat.missing", { suit: suitLabel(p.missing) }),
          text: `${t("seat.missing_short")} ${suitLabel(p.missing)}`,
        })
      : null,
    p.won ? h("span", { class: "badge won", text: t("seat.won") }) : null,
    h("span", { class: "seat-score", "aria-label": t("seat.score", { score: p.score }), text: signed(p.score) }),
  );
  panel.append(head);
  const clock = clockText(view, seat, serverNow, lag);
  const status = [];
  if (pending) status.push(isTurn ? t("seat.turn") : t("seat.deciding"));
  if (view.phase === "exchange" && p.chose_exchange) status.push(t("seat.chose"));
  if (view.phase === "missing" && p.declared_missing && !p.missing) status.push(t("seat.declared"));
  panel.append(
    h(
      "div",
      { class: "seat-status" },
      h("span", { class: "status-text", text: status.join(" · ") }),
      clock
        ? h("span", {
            class: `clock ${clock.running ? "running" : ""} ${clock.urgent ? "urgent" : ""}`,
            dataset: { clockSeat: String(seat) },
            "aria-label": t("clock.label", { text: clock.text }),
            text: clock.text,
          })
        : null,
    ),
  );
  if (seat !== me || !p.hand) {
    const concealed = h("div", { class: "concealed", "aria-label": t("seat.concealed", { n: p.concealed_count }) });
    if (p.hand) {
      sortTiles(p.hand).forEach((tile) => concealed.append(tileElement(tile, { small: true })));
    } else {
      for (let i = 0; i < p.concealed_count; i++) concealed.append(tileElement(null, { small: true, extraClass: "mini" }));
    }
    panel.append(concealed);
  }
  if (p.melds.length) {
    panel.append(h("div", { class: "melds", "aria-label": t("seat.melds") }, p.melds.map(meldElement)));
  }
  const discards = h("div", { class: "discards", "aria-label": t("seat.discards", { n: p.discards.length }) });
  const win = view.window;
  p.discards.forEach((tile, i) => {
    const last = win && win.kind === "discard" && win.source === seat && i === p.discards.length - 1;
    discards.append(tileElement(tile, { small: true, extraClass: last ? "last-discard" : "" }));
  });
  panel.append(discards);
  return panel;
}

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

function centre(view, { me, names, serverNow, lag }) {
  const box = h("section", { class: "centre", "aria-label": t("table.centre") });
  box.append(
    h("div", { class: "wall", text: t("table.wall", { n: view.wall_left }) }),
    h("div", { class: "phase", text: phaseText(view, me, names) }),
  );
  if (view.direction) box.append(h("div", { class: "direction", text: t("table.direction", { direction: t(`direction.${view.direction}`) }) }));
  const w = view.window;
  if (w) {
    box.append(
      h(
        "div",
        { class: "window", role: "status" },
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
      if (c && c.running) box.append(h("div", { class: "countdown", dataset: { countdown: "1" }, text: formatSeconds(c.remaining) }));
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
    if (me !== null && view.window.pending.includes(me)) return t("phase.window_you");
    return t("phase.window_wait");
  }
  if (view.turn !== null && view.turn !== undefined) {
    if (view.turn === me) return t("phase.turn_you");
    return t("phase.turn_other", { name: playerName(view.players[view.turn].player, names) });
  }
  return "";
}

function handRow(view, mine, { me, legal, onTile, selected }) {
  const row = h("section", { class: "my-hand", "aria-label": t("hand.label") });
  const tiles = sortTiles(mine.hand);
  let drawn = null;
  if (view.drawn) {
    const at = tiles.lastIndexOf(view.drawn);
    if (at >= 0) drawn = tiles.splice(at, 1)[0];
  }
  const discardable = new Set(legal.filter((c) => c.type === "discard").map((c) => c.tile));
  const exchanging = legal.some((c) => c.type === "choose_exchange");
  const list = h("div", { class: "hand-tiles", role: "group", "aria-label": t("hand.tiles", { n: mine.hand.length }) });
  const add = (tile, index, isDrawn) => {
    const canAct = me !== null && (discardable.has(tile) || exchanging) && onTile;
    const key = `${isDrawn ? "d" : "h"}${index}`;
    const classes = [
      canAct ? "legal" : "",
      selected.has(key) ? "selected" : "",
      isDrawn ? "drawn" : "",
      !canAct && onTile && (legal.length || exchanging) ? "inert" : "",
    ].join(" ");
    const label = tileLabel(tile) + (isDrawn ? `, ${t("hand.drawn")}` : "") + (selected.has(key) ? `, ${t("hand.selected")}` : "");
    const node = tileElement(tile, { onClick: onTile ? () => canAct && onTile(tile, key) : undefined, extraClass: classes, label });
    node.dataset.key = key;
    if (onTile && !canAct) node.setAttribute("aria-disabled", "true");
    return node;
  };
  tiles.forEach((tile, i) => list.append(add(tile, i, false)));
  row.append(list);
  if (drawn) row.append(h("div", { class: "drawn-slot" }, add(drawn, 0, true)));
  return row;
}
