// The settlement of a finished hand, from its events (all public once it has ended): every
// win with its fan patterns, kong payments, flower pigs, not-ready penalties and refunds,
// per seat and line by line, then the final scores, placements and the seed.
import { h, playerName, winningHand, winningHandLabel } from "./board.js";
import { t } from "./i18n.js";
import { tileLabel } from "./tiles.js";

const CATEGORY = {
  discard_win: "wins",
  self_drawn_win: "wins",
  robbed_kong_win: "wins",
  concealed_kong: "kongs",
  added_kong: "kongs",
  exposed_kong: "kongs",
  flower_pig: "flower_pig",
  not_ready: "not_ready",
  kong_refund: "refunds",
};
const CATEGORIES = ["wins", "kongs", "flower_pig", "not_ready", "refunds"];

export function settlementOf(events) {
  const started = events.find((e) => e.type === "hand_started");
  const ended = events.find((e) => e.type === "hand_ended");
  const payments = [];
  const wins = [];
  for (const e of events) {
    if (e.type === "won") {
      wins.push(e);
      payments.push(...e.payments);
    } else if (e.type === "konged") {
      payments.push(...e.payments);
    } else if (e.type === "settlement_item") {
      payments.push(e.payment);
    }
  }
  const totals = [0, 1, 2, 3].map(() => Object.fromEntries(CATEGORIES.map((c) => [c, 0])));
  const touched = [0, 1, 2, 3].map(() => new Set()); // the kinds of payment a seat had any of
  for (const p of payments) {
    const c = CATEGORY[p.reason];
    totals[p.payee][c] += p.amount;
    totals[p.payer][c] -= p.amount;
    touched[p.payee].add(c);
    touched[p.payer].add(c);
  }
  return {
    players: started ? started.seats : [],
    wins,
    payments,
    totals,
    touched,
    exhausted: events.find((e) => e.type === "wall_exhausted") || null,
    ended,
    commitment: started ? started.commitment : null,
  };
}

// Points with their sign: "+4", "-2", "0" (never "-0").
export function signed(n) {
  const v = Number(n) || 0;
  return v > 0 ? `+${v}` : v < 0 ? `-${Math.abs(v)}` : "0";
}

function listNames(names) {
  return new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" }).format(names);
}

// Who paid a win: "4 points from Computer 1", "3 points from each of A, B and C".
function paidText(w, name) {
  const pays = w.payments || [];
  if (!pays.length) return "";
  const amounts = [...new Set(pays.map((p) => p.amount))];
  if (pays.length > 1 && amounts.length === 1) return t("settlement.paid_each", { amount: amounts[0], names: listNames(pays.map((p) => name(p.payer))) });
  return listNames(pays.map((p) => t("settlement.paid_from", { amount: p.amount, name: name(p.payer) })));
}

function patternsText(patterns) {
  if (!patterns.length) return t("pattern.standard");
  const counts = new Map();
  for (const p of patterns) counts.set(p, (counts.get(p) || 0) + 1);
  return [...counts].map(([p, n]) => (n > 1 ? `${t(`pattern.${p}`)} ×${n}` : t(`pattern.${p}`))).join(", ");
}

// `id`: the section can take focus (after the result dialog closes, focus goes there).
// `view`: the hand's last view (the winners' declared groups).
export function renderSettlement(events, names, me, { id, view = null } = {}) {
  const s = settlementOf(events);
  const name = (seat) => playerName(s.players[seat], names) + (seat === me ? ` (${t("seat.you")})` : "");
  const titleId = `${id || "dialog"}-settlement-title`;
  const box = h("section", { class: "settlement", id, tabindex: id ? "-1" : undefined, "aria-labelledby": titleId });
  box.append(h("h3", { id: titleId, text: t("settlement.title") }));
  if (s.ended) box.append(h("p", { class: "end-kind", text: t(`end.${s.ended.end}`) }));

  // The standings: place, player (with what the points came from), total.
  const table = h("table", { class: "settlement-table standings" }, h("caption", { class: "sr-only", text: t("settlement.caption") }));
  table.append(
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col", class: "place", text: t("settlement.place") }),
        h("th", { scope: "col", text: t("settlement.player") }),
        h("th", { scope: "col", class: "total", text: t("settlement.total") }),
      ),
    ),
  );
  const body = h("tbody");
  const seats = s.players.map((_, seat) => seat);
  if (s.ended) seats.sort((a, b) => s.ended.placements[a] - s.ended.placements[b] || a - b);
  for (const seat of seats) {
    const parts = CATEGORIES.filter((c) => s.touched[seat].has(c)).map((c) => `${t(`settlement.${c}`)} ${signed(s.totals[seat][c])}`);
    const total = s.ended ? s.ended.scores[seat] : CATEGORIES.reduce((n, c) => n + s.totals[seat][c], 0);
    body.append(
      h(
        "tr",
        { class: `${seat === me ? "is-me" : ""} ${total > 0 ? "plus" : total < 0 ? "minus" : ""}` },
        h("td", { class: "place", text: s.ended ? String(s.ended.placements[seat]) : "" }),
        h("th", { scope: "row" }, h("span", { class: "standing-name", text: name(seat) }), h("span", { class: "breakdown", text: parts.length ? parts.join(" · ") : t("settlement.no_payments") })),
        h("td", { class: "total", text: signed(total) }),
      ),
    );
  }
  table.append(body);
  box.append(table);

  // Every win: the hand laid down, how it was won, its fan, and who paid.
  if (s.wins.length) {
    const list = h("ul", { class: "wins" });
    for (const w of s.wins) {
      const tile = w.tile ? tileLabel(w.tile) : "—";
      const how = w.self_drawn
        ? t("settlement.how_self_drawn", { tile })
        : w.patterns.includes("robbing_kong")
          ? t("settlement.how_robbed", { tile, name: name(w.from_seat) })
          : t("settlement.how_discard", { tile, name: name(w.from_seat) });
      const fan = t(w.fan > 3 ? "settlement.fan_capped" : "settlement.fan_line", { patterns: patternsText(w.patterns), fan: w.fan, value: w.value });
      const melds = view && view.players[w.seat] ? view.players[w.seat].melds : [];
      const label = winningHandLabel(name(w.seat), w, melds);
      const gained = (w.payments || []).reduce((n, p) => n + p.amount, 0);
      list.append(
        h(
          "li",
          { class: "win" },
          h("div", { class: "win-head" }, h("strong", { text: name(w.seat) }), " ", h("span", { text: how })),
          winningHand(w, melds, label),
          h("div", { class: "win-fan", text: fan }),
          h("div", { class: "win-paid" }, h("strong", { text: signed(gained) }), " ", h("span", { text: paidText(w, name) })),
        ),
      );
    }
    box.append(h("h4", { text: t("settlement.wins") }), list);
  }

  // Exhaustion: who was ready, who was a flower pig.
  if (s.exhausted) {
    const lines = h("ul", { class: "exhaustion" });
    s.exhausted.ready.forEach((ready, seat) => {
      let text;
      if (ready === null) text = t("settlement.already_won");
      else if (s.exhausted.flower_pigs.includes(seat)) text = t("settlement.flower_pig_seat");
      else if (ready) text = t("settlement.ready", { value: s.exhausted.base_values[seat] });
      else text = t("settlement.not_ready_seat");
      lines.append(h("li", {}, h("strong", { text: name(seat) }), h("span", { text: t("settlement.exhaustion_line", { text }) })));
    });
    box.append(h("h4", { text: t("settlement.exhaustion") }), lines);
  }

  // The payments, grouped by their reason.
  if (s.payments.length) {
    const groups = h("div", { class: "payment-groups" });
    for (const c of CATEGORIES) {
      const these = s.payments.filter((p) => CATEGORY[p.reason] === c);
      if (!these.length) continue;
      groups.append(
        h("h5", { text: t(`settlement.${c}`) }),
        h(
          "ul",
          { class: "payments" },
          these.map((p) => h("li", { text: t("settlement.payment_line", { payer: name(p.payer), payee: name(p.payee), amount: p.amount, reason: t(`reason.${p.reason}`) }) })),
        ),
      );
    }
    box.append(h("details", { class: "payment-details" }, h("summary", { text: t("settlement.payments", { n: s.payments.length }) }), groups));
  }
  if (s.commitment || (s.ended && s.ended.seed)) {
    box.append(
      h(
        "details",
        { class: "fairness" },
        h("summary", { text: t("settlement.fairness") }),
        h("p", {}, h("span", { text: t("settlement.commitment_label") }), " ", h("code", { text: s.commitment || "—" })),
        h("p", {}, h("span", { text: t("settlement.seed_label") }), " ", h("code", { text: (s.ended && s.ended.seed) || "—" })),
      ),
    );
  }
  return box;
}
