// A player's profile (#/player/<id>): name, rating (provisional or not), rated and casual
// hands, the rating over time as an SVG chart drawn here (one <circle data-point> per rated
// hand, from GET /api/players/{id}/ratings: the whole history), the figures of the player's
// hands as cards (GET /api/players/{id}/stats, optionally one kind) and the places as bars.
// Another player's private-table hands are not in the figures the server sends a viewer.
import { api, session } from "./api.js";
import { h } from "./board.js";
import { chartModel } from "./chart.js";
import { formatNumber, serverMessage, t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const KINDS = ["practice", "casual", "rated", "quick_play"];

let resize = null;

export function closeProfile() {
  if (resize) window.removeEventListener("resize", resize);
  resize = null;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

const percent = (x) => formatNumber(x, { style: "percent", maximumFractionDigits: 1 });
// Ratings read as on the leaderboard: 1521, not 1,521.
const decimal = (x, digits = 1) => formatNumber(x, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false });
const signedInt = (x) => (x > 0 ? "+" : x < 0 ? "−" : "") + formatNumber(Math.abs(x));
const signed = (x) => (x > 0 ? "+" : x < 0 ? "−" : "±") + decimal(Math.abs(x));

// The chart of `history` drawn `width` pixels wide (its container's width: no scaling, so
// its text stays legible on a phone).
export function ratingChart(history, width) {
  const height = width < 480 ? 220 : 280;
  const m = chartModel(history, width, height);
  const { plot } = m;
  const first = history.length ? history[0].rating_before : 1500;
  const last = history.length ? history[history.length - 1].rating_after : 1500;
  const chart = svg("svg", {
    class: "rating-chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": t("profile.chart_label", { n: history.length, from: decimal(first, 0), to: decimal(last, 0) }),
    "data-testid": "rating-chart",
  });
  for (const tick of m.yTicks) {
    chart.append(
      svg("line", { class: "grid", x1: plot.left, x2: plot.right, y1: tick.y, y2: tick.y }),
      svg("text", { class: "tick y", x: plot.left - 6, y: tick.y + 4, "text-anchor": "end" }, decimal(tick.value, 0)),
    );
  }
  for (const tick of m.xTicks) {
    chart.append(
      svg("line", { class: "axis-tick", x1: tick.x, x2: tick.x, y1: plot.bottom, y2: plot.bottom + 4 }),
      svg("text", { class: "tick x", x: tick.x, y: plot.bottom + 17, "text-anchor": "middle" }, formatNumber(tick.value)),
    );
  }
  chart.append(
    svg("line", { class: "axis", x1: plot.left, x2: plot.right, y1: plot.bottom, y2: plot.bottom }),
    svg("line", { class: "axis", x1: plot.left, x2: plot.left, y1: plot.top, y2: plot.bottom }),
    svg("text", { class: "axis-label", x: plot.right, y: height - 2, "text-anchor": "end" }, t("profile.chart_x")),
  );
  if (m.line.length > 1) {
    chart.append(svg("polyline", { class: "rating-line", points: m.line.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ") }));
  }
  const r = history.length > 60 ? 2.5 : history.length > 20 ? 3.5 : 5;
  for (const p of m.points) {
    chart.append(
      svg(
        "circle",
        { class: `rating-point ${p.delta >= 0 ? "up" : "down"}`, cx: p.x.toFixed(1), cy: p.y.toFixed(1), r, "data-point": p.index, "data-hand": p.hand_id },
        svg("title", {}, t("profile.point", { n: p.index, hand: p.hand_id, change: signed(p.delta), rating: decimal(p.rating), points: p.points })),
      ),
    );
  }
  return chart;
}

function figureCard(key, value, detail) {
  return h(
    "div",
    { class: "figure-card", dataset: { figure: key } },
    h("span", { class: "figure-label", text: t(`profile.fig.${key}`) }),
    h("span", { class: "figure-value", text: value }),
    detail ? h("span", { class: "figure-detail muted", text: detail }) : null,
  );
}

export function figureCards(f) {
  const of = (n, total) => t("profile.of_hands", { n, total });
  return h(
    "div",
    { class: "figure-grid", dataset: { testid: "figures" } },
    figureCard("hands", formatNumber(f.hands), t("profile.hands_split", { rated: f.rated, casual: f.casual })),
    figureCard("win_rate", percent(f.win_rate), of(f.wins, f.hands)),
    figureCard("average_points", signed(f.average_points), t("profile.total_points", { n: Math.abs(f.points), shown: signedInt(f.points) })),
    figureCard("deal_in_rate", percent(f.deal_in_rate), t("profile.deal_ins", { n: f.deal_ins, hands: f.dealt_in_hands })),
    figureCard("self_draw_share", percent(f.self_draw_share), t("profile.of_wins", { n: f.self_drawn, total: f.wins })),
    figureCard("average_fan", f.wins ? decimal(f.average_fan) : "—", t("profile.over_wins", { n: f.wins })),
    figureCard("flower_pig_rate", percent(f.flower_pig_rate), of(f.flower_pigs, f.hands)),
    figureCard("not_ready_rate", percent(f.not_ready_rate), of(f.not_ready, f.hands)),
  );
}

// The page's CSP allows no style attribute: the bar's width is set through the CSSOM.
function bar(place, share) {
  const node = h("span", { class: `bar place-${place}` });
  node.style.width = `${(100 * share).toFixed(1)}%`;
  return node;
}

export function placeBars(places) {
  const total = places.reduce((a, b) => a + b, 0);
  const most = Math.max(1, ...places);
  return h(
    "ol",
    { class: "place-bars", dataset: { testid: "places" } },
    ...places.map((n, i) =>
      h(
        "li",
        { class: "place-bar", dataset: { place: String(i + 1) } },
        h("span", { class: "place-name", text: t(`profile.place.${i + 1}`) }),
        h("span", { class: "bar-track", "aria-hidden": "true" }, bar(i + 1, n / most)),
        h("span", { class: "place-count", text: total ? t("profile.place_count", { n, share: percent(n / total) }) : "0" }),
      ),
    ),
  );
}

export async function openProfile(root, playerId) {
  closeProfile();
  const me = session() && session().account;
  const id = playerId || (me && me.id);
  root.replaceChildren(h("h1", { text: t("profile.title") }), h("p", { text: t("table.loading") }));
  const path = `/api/players/${encodeURIComponent(id)}`;
  let profile, history, stats;
  try {
    [profile, history, stats] = await Promise.all([api("GET", path), api("GET", `${path}/ratings`), api("GET", `${path}/stats`)]);
  } catch (e) {
    root.replaceChildren(h("h1", { text: t("profile.title") }), h("p", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
    return;
  }
  const chartBox = h("div", { class: "chart-box" });
  const drawChart = () => {
    const width = Math.max(260, Math.floor(chartBox.clientWidth || 600));
    chartBox.replaceChildren(history.length ? ratingChart(history, width) : h("p", { class: "muted", text: t("ratings.no_history") }));
  };
  const figuresBox = h("div", {}, figureCards(stats));
  const placesBox = h("div", {}, placeBars(stats.places));
  const kind = h(
    "select",
    {
      name: "kind",
      onchange: async () => {
        try {
          const f = await api("GET", `${path}/stats${kind.value ? `?kind=${kind.value}` : ""}`);
          figuresBox.replaceChildren(figureCards(f));
          placesBox.replaceChildren(placeBars(f.places));
        } catch (e) {
          figuresBox.replaceChildren(h("p", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
        }
      },
    },
    h("option", { value: "", text: t("profile.kind_all") }),
    ...KINDS.map((k) => h("option", { value: k, text: t(`profile.kind.${k}`) })),
  );
  const own = me && me.id === id;
  root.replaceChildren(
    h("h1", { dataset: { testid: "profile-name" } }, profile.name, profile.guest ? h("span", { class: "badge muted", text: ` (${t("auth.guest")})` }) : null),
    h(
      "div",
      { class: "profile-head" },
      h(
        "section",
        { class: "card" },
        h("h2", { text: own ? t("ratings.yours") : t("profile.rating") }),
        h("p", { class: "big", dataset: { testid: "profile-rating" }, text: decimal(profile.rating, 0) }),
        h("p", { class: "muted", dataset: { testid: "profile-provisional" }, text: profile.provisional ? t("ratings.provisional", { n: profile.rated_hands }) : t("ratings.established", { n: profile.rated_hands }) }),
        h("p", { dataset: { testid: "profile-counts" }, text: t("profile.counts", { rated: stats.rated, casual: stats.casual }) }),
      ),
      h("section", { class: "card chart-card" }, h("h2", { text: t("profile.chart") }), chartBox),
    ),
    h(
      "section",
      { class: "card wide" },
      h("div", { class: "figures-head" }, h("h2", { text: t("profile.figures") }), h("label", { class: "field inline" }, h("span", { text: t("profile.kind_label") }), kind)),
      figuresBox,
      h("h3", { text: t("profile.places") }),
      placesBox,
      h("p", { class: "muted small", text: own ? t("profile.note_own") : t("profile.note_other") }),
    ),
  );
  drawChart();
  let pending = null;
  resize = () => {
    clearTimeout(pending);
    pending = setTimeout(() => document.body.contains(chartBox) && drawChart(), 150);
  };
  window.addEventListener("resize", resize);
}
