// The settlement of a finished hand, from its events (all public once it has ended): every
// win with its fan patterns, kong payments, flower pigs, not-ready penalties and refunds,
// per seat and line by line, then the final scores, placements and the seed.
import { spoken } from "./a11y.js";
import { h, playerName } from "./board.js";
import { t } from "./i18n.js";
import { tileElement, tileLabel } from "./tiles.js";

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
  for (const p of payments) {
    const c = CATEGORY[p.reason];
    totals[p.payee][c] += p.amount;
    totals[p.payer][c] -= p.amount;
  }
  return {
    players: started ? started.seats : [],
    wins,
    payments,
    totals,
    exhausted: events.find((e) => e.type === "wall_exhausted") || null,
    ended,
    commitment: started ? started.commitment : null,
  };
}

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

// `id`: the section can take focus (after the result dialog closes, focus goes there).
export function renderSettlement(events, names, me, { id } = {}) {
  const s = settlementOf(events);
  const name = (seat) => playerName(s.players[seat], names) + (seat === me ? ` (${t("seat.you")})` : "");
  const titleId = `${id || "dialog"}-settlement-title`;
  const box = h("section", { class: "settlement", id, tabindex: id ? "-1" : undefined, "aria-labelledby": titleId });
  box.append(h("h3", { id: titleId, text: t("settlement.title") }));
  if (s.ended) box.append(h("p", { class: "end-kind", text: t(`end.${s.ended.end}`) }));

  // Per seat and category.
  const table = h("table", { class: "settlement-table" }, h("caption", { class: "sr-only", text: t("settlement.caption") }));
  table.append(
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col", text: t("settlement.player") }),
        CATEGORIES.map((c) => h("th", { scope: "col", text: t(`settlement.${c}`) })),
        h("th", { scope: "col", text: t("settlement.total") }),
        h("th", { scope: "col", text: t("settlement.place") }),
      ),
    ),
  );
  const body = h("tbody");
  s.players.forEach((_, seat) => {
    body.append(
      h(
        "tr",
        { class: seat === me ? "is-me" : "" },
        h("th", { scope: "row", text: name(seat) }),
        CATEGORIES.map((c) => h("td", {}, s.totals[seat][c] ? signed(s.totals[seat][c]) : spoken("·", "0"))),
        h("td", { class: "total", text: s.ended ? signed(s.ended.scores[seat]) : "" }),
        h("td", { text: s.ended ? String(s.ended.placements[seat]) : "" }),
      ),
    );
  });
  table.append(body);
  box.append(table);

  // Wins with their fan patterns.
  if (s.wins.length) {
    const list = h("ul", { class: "wins" });
    for (const w of s.wins) {
      const how = w.self_drawn
        ? t("settlement.self_drawn")
        : w.patterns.includes("robbing_kong")
          ? t("settlement.robbed_from", { name: name(w.from_seat) })
          : t("settlement.from", { name: name(w.from_seat) });
      const patterns = w.patterns.length
        ? w.patterns.map((p) => t(`pattern.${p}`)).join(", ")
        : t("pattern.standard");
      list.append(
        h(
          "li",
          {},
          h("strong", { text: name(w.seat) }),
          " ",
          h("span", { text: t("settlement.won_on", { tile: w.tile ? tileLabel(w.tile) : "—", how }) }),
          " — ",
          h("span", { text: t("settlement.fan", { patterns, fan: w.fan, value: w.value }) }),
          h(
            "div",
            { class: "revealed", role: "img", "aria-label": t("settlement.revealed", { tiles: w.hand.map(tileLabel).join(", ") }) },
            w.hand.map((tile) => tileElement(tile, { small: true, decorative: true })),
          ),
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

  // Every payment.
  if (s.payments.length) {
    const lines = h("ol", { class: "payments" });
    for (const p of s.payments) {
      lines.append(
        h("li", {
          text: t("settlement.payment", {
            payer: name(p.payer),
            payee: name(p.payee),
            amount: p.amount,
            reason: t(`reason.${p.reason}`),
          }),
        }),
      );
    }
    box.append(h("details", {}, h("summary", { text: t("settlement.payments", { n: s.payments.length }) }), lines));
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
