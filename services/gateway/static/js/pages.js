// Ratings (own rating, its history, the leaderboard) and hand history with JSON export (the
// replay viewer is js/replay.js).
import { api, session } from "./api.js";
import { h } from "./board.js";
import { currentLanguage, serverMessage, t } from "./i18n.js";

export async function openRatings(root) {
  root.replaceChildren(h("h1", { text: t("ratings.title") }));
  const me = session().account;
  try {
    const [profile, board] = await Promise.all([
      api("GET", `/api/players/${encodeURIComponent(me.id)}`),
      api("GET", "/api/ratings/leaderboard?limit=50"),
    ]);
    root.append(
      h(
        "section",
        { class: "card" },
        h("h2", { text: t("ratings.yours") }),
        h("p", { class: "big", dataset: { testid: "my-rating" }, text: profile.rating.toFixed(0) }),
        h("p", { class: "muted", text: profile.provisional ? t("ratings.provisional", { n: profile.rated_hands }) : t("ratings.established", { n: profile.rated_hands }) }),
      ),
    );
    const hist = h("table", { class: "data" });
    hist.append(h("thead", {}, h("tr", {}, ...["ratings.hand", "ratings.points", "ratings.before", "ratings.after", "ratings.change"].map((k) => h("th", { scope: "col", text: t(k) })))));
    const body = h("tbody");
    for (const c of profile.history) {
      body.append(
        h("tr", {},
          h("td", {}, h("a", { href: `#/replay/${encodeURIComponent(c.hand_id)}`, text: c.hand_id })),
          h("td", { text: String(c.points) }),
          h("td", { text: c.rating_before.toFixed(1) }),
          h("td", { text: c.rating_after.toFixed(1) }),
          h("td", { text: (c.delta > 0 ? "+" : "") + c.delta.toFixed(1) })),
      );
    }
    hist.append(body);
    root.append(h("section", { class: "card wide" }, h("h2", { text: t("ratings.history") }), profile.history.length ? hist : h("p", { class: "muted", text: t("ratings.no_history") })));
    const lb = h("table", { class: "data" });
    lb.append(h("thead", {}, h("tr", {}, ...["ratings.rank", "ratings.player", "ratings.rating", "ratings.hands"].map((k) => h("th", { scope: "col", text: t(k) })))));
    const lbody = h("tbody");
    for (const r of board) {
      lbody.append(h("tr", { class: r.player === me.id ? "is-me" : "" }, h("td", { text: String(r.rank) }), h("td", { text: r.name }), h("td", { text: r.rating.toFixed(0) }), h("td", { text: String(r.rated_hands) })));
    }
    lb.append(lbody);
    root.append(h("section", { class: "card wide" }, h("h2", { text: t("ratings.leaderboard") }), board.length ? lb : h("p", { class: "muted", text: t("ratings.no_leaders") })));
  } catch (e) {
    root.append(h("p", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
  }
}

export async function openHistory(root) {
  root.replaceChildren(h("h1", { text: t("history.title") }));
  const me = session().account;
  try {
    const hands = await api("GET", `/api/players/${encodeURIComponent(me.id)}/hands?limit=50`);
    if (!hands.length) {
      root.append(h("p", { class: "muted", text: t("history.none") }));
      return;
    }
    const table = h("table", { class: "data" });
    table.append(h("thead", {}, h("tr", {}, ...["history.when", "history.hand", "history.score", "history.place", "history.actions"].map((k) => h("th", { scope: "col", text: t(k) })))));
    const body = h("tbody");
    for (const x of hands) {
      body.append(
        h("tr", {},
          h("td", { text: new Date(x.ended_ms).toLocaleString(currentLanguage()) }),
          h("td", { text: x.hand_id }),
          h("td", { text: String(x.score) }),
          h("td", { text: String(x.placement) }),
          h("td", {},
            h("a", { href: `#/replay/${encodeURIComponent(x.hand_id)}`, class: "button secondary", text: t("history.replay") }),
            h("button", { class: "button secondary", type: "button", text: t("history.export"), onclick: () => exportHand(x.hand_id) }))),
      );
    }
    table.append(body);
    root.append(table);
  } catch (e) {
    root.append(h("p", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
  }
}

export async function exportHand(handId) {
  const data = await api("GET", `/api/hands/${encodeURIComponent(handId)}/export`);
  const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: `${handId.replace("#", "-")}.json` });
  document.body.append(a);
  a.click();
  a.remove();
}
