// Ratings (own rating, its history, the leaderboard) and hand history with JSON export (the
// replay viewer is js/replay.js).
import { api, apiPage, session } from "./api.js";
import { h, playerName } from "./board.js";
import { fixed, signed } from "./format.js";
import { currentLanguage, serverMessage, t } from "./i18n.js";

export async function openRatings(root) {
  root.replaceChildren(h("h1", { text: t("ratings.title") }));
  const me = session().account;
  const lang = currentLanguage();
  try {
    const [profile, board, mine] = await Promise.all([
      api("GET", `/api/players/${encodeURIComponent(me.id)}`),
      api("GET", `/api/ratings/leaderboard?limit=${BOARD_LINES}`),
      api("GET", "/api/ratings/leaderboard/me"),
    ]);
    root.append(
      h(
        "section",
        { class: "card" },
        h("h2", { text: t("ratings.yours") }),
        h("p", { class: "big", dataset: { testid: "my-rating" }, text: fixed(profile.rating, 0, lang) }),
        h("p", { class: "muted", text: profile.provisional ? t("ratings.provisional", { n: profile.rated_hands }) : t("ratings.established", { n: profile.rated_hands }) }),
        h("p", { dataset: { testid: "my-rank" }, text: mine.rank ? t("ratings.my_rank", { rank: mine.rank, of: mine.of }) : t("ratings.unranked") }),
      ),
    );
    const hist = h("table", { class: "data" });
    hist.append(h("thead", {}, h("tr", {}, ...["ratings.hand", "ratings.points", "ratings.before", "ratings.after", "ratings.change"].map((k) => h("th", { scope: "col", text: t(k) })))));
    const body = h("tbody");
    for (const c of profile.history) {
      body.append(
        h("tr", {},
          h("td", {}, h("a", { href: `#/replay/${encodeURIComponent(c.hand_id)}`, text: c.hand_id })),
          h("td", { text: signed(c.points, 0, lang) }),
          h("td", { text: fixed(c.rating_before, 1, lang) }),
          h("td", { text: fixed(c.rating_after, 1, lang) }),
          h("td", { dataset: { testid: "rating-change" }, text: signed(c.delta, 1, lang) })),
      );
    }
    hist.append(body);
    root.append(h("section", { class: "card wide" }, h("h2", { text: t("ratings.history") }), profile.history.length ? hist : h("p", { class: "muted", text: t("ratings.no_history") })));
    const line = (r) =>
      h("tr", { class: r.player === me.id ? "is-me" : "", dataset: { testid: "leader" } },
        h("td", { text: String(r.rank) }),
        h("td", {},
          h("a", { href: `#/player/${encodeURIComponent(r.player)}`, text: r.name }),
          r.provisional ? h("span", { class: "badge provisional", title: t("ratings.provisional_title"), text: t("ratings.provisional_mark") }) : null),
        h("td", { text: fixed(r.rating, 0, lang) }),
        h("td", { text: String(r.rated_hands) }));
    const lb = h("table", { class: "data leaderboard" });
    lb.append(h("thead", {}, h("tr", {}, ...["ratings.rank", "ratings.player", "ratings.rating", "ratings.hands"].map((k) => h("th", { scope: "col", text: t(k) })))));
    const lbody = h("tbody", {}, ...board.map(line));
    // The player's own line even when it is below the lines shown.
    if (mine.rank && !board.some((r) => r.player === me.id)) {
      lbody.append(h("tr", { class: "gap", "aria-hidden": "true" }, h("td", { colspan: "4", text: "⋯" })), line({ ...mine, name: profile.name || mine.name }));
    }
    lb.append(lbody);
    root.append(
      h("section", { class: "card wide" },
        h("h2", { text: t("ratings.leaderboard") }),
        h("p", { class: "muted", text: t("ratings.order") }),
        board.length ? lb : h("p", { class: "muted", text: t("ratings.no_leaders") })),
    );
  } catch (e) {
    root.append(h("p", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
  }
}

const BOARD_LINES = 50;
const HAND_PAGE = 10;
const HAND_KINDS = ["all", "practice", "casual", "rated", "quick_play"];
// Where "My hands" was (kind and page), so that coming back from a replay finds it again.
const handsAt = { kind: "all", page: 0 };

export async function openHistory(root) {
  const me = session().account;
  const lang = currentLanguage();
  const status = h("p", { class: "hands-range", role: "status", dataset: { testid: "hands-range" } });
  const list = h("ul", { class: "hands", dataset: { testid: "hands" } });
  const filters = h("div", { class: "hands-kinds", role: "group", "aria-label": t("history.kind_label") });
  const previous = h("button", { class: "button secondary", type: "button", text: t("history.previous"), dataset: { testid: "hands-previous" } });
  const next = h("button", { class: "button secondary", type: "button", text: t("history.next"), dataset: { testid: "hands-next" } });
  const pager = h("nav", { class: "pager", "aria-label": t("history.pages") }, previous, next);
  root.replaceChildren(h("h1", { text: t("history.title") }), filters, status, list, pager);
  let loading = 0;

  const show = async () => {
    const ask = ++loading;
    for (const b of filters.children) b.setAttribute("aria-pressed", String(b.dataset.kind === handsAt.kind));
    const kind = handsAt.kind === "all" ? "" : `&kind=${handsAt.kind}`;
    let page;
    try {
      page = await apiPage(`/api/players/${encodeURIComponent(me.id)}/hands?limit=${HAND_PAGE}&offset=${handsAt.page * HAND_PAGE}${kind}`);
    } catch (e) {
      if (ask !== loading) return;
      list.replaceChildren();
      status.replaceChildren(h("span", { class: "notice", role: "alert", text: serverMessage(e.code, e.params, e.message) }));
      return;
    }
    if (ask !== loading) return; // a later click asked for another page meanwhile
    const total = page.total ?? page.rows.length;
    if (!page.rows.length && handsAt.page > 0) {
      handsAt.page = Math.max(0, Math.ceil(total / HAND_PAGE) - 1); // fewer hands than before
      if (total) return show();
    }
    list.replaceChildren(...page.rows.map((x) => handCard(x, me.id, lang)));
    const first = handsAt.page * HAND_PAGE + 1;
    const pages = Math.max(1, Math.ceil(total / HAND_PAGE));
    status.textContent = page.rows.length
      ? t("history.range", { from: first, to: first + page.rows.length - 1, total, page: handsAt.page + 1, pages })
      : handsAt.kind === "all" ? t("history.none") : t("history.none_kind", { kind: t(`history.kind.${handsAt.kind}`) });
    previous.disabled = handsAt.page === 0;
    next.disabled = first + page.rows.length - 1 >= total;
    pager.hidden = pages <= 1;
  };

  for (const kind of HAND_KINDS) {
    filters.append(
      h("button", {
        class: "button secondary chip",
        type: "button",
        dataset: { kind },
        "aria-pressed": "false",
        text: t(`history.kind.${kind}`),
        onclick: () => {
          handsAt.kind = kind;
          handsAt.page = 0;
          show();
        },
      }),
    );
  }
  previous.addEventListener("click", () => {
    handsAt.page = Math.max(0, handsAt.page - 1);
    show();
  });
  next.addEventListener("click", () => {
    handsAt.page += 1;
    show();
  });
  await show();
}

// One finished hand: when, what kind, against whom, and how it went; the card opens the replay.
function handCard(x, me, lang) {
  const href = `#/replay/${encodeURIComponent(x.hand_id)}`;
  const when = x.ended_ms ? new Date(x.ended_ms).toLocaleString(lang, { dateStyle: "medium", timeStyle: "short" }) : "—";
  const others = x.players.filter((p, seat) => seat !== x.seat && p !== me).map((p) => playerName(p, x.names));
  const result = [
    t("history.points_n", { points: signed(x.score, 0, lang) }),
    t("history.place_n", { n: x.placement }),
    x.best_fan === null || x.best_fan === undefined ? t("history.no_win") : t("history.fan_n", { n: x.best_fan }),
  ];
  return h(
    "li",
    { class: `hand-card place-${x.placement}`, dataset: { testid: "hand", hand: x.hand_id, kind: x.kind } },
    h(
      "a",
      { class: "hand-open", href, "aria-label": t("history.open", { when, others: others.join(", ") }) },
      h("span", { class: "hand-when", text: when }),
      h("span", { class: `badge kind-${x.kind}`, text: t(`history.kind.${x.kind}`) }),
      h("span", { class: "hand-others", dataset: { testid: "hand-others" }, text: t("history.with", { names: others.join(", ") }) }),
      h("span", { class: "hand-result", text: result.join(" · ") }),
      x.accuracy === null || x.accuracy === undefined
        ? null
        : h("span", { class: "badge hand-accuracy", title: t("history.accuracy_title"), dataset: { testid: "hand-accuracy" }, text: t("history.accuracy", { accuracy: fixed(x.accuracy, 1, lang) }) }),
    ),
    h("button", { class: "button secondary hand-export", type: "button", text: t("history.export"), onclick: () => exportHand(x.hand_id) }),
  );
}

export async function exportHand(handId) {
  const data = await api("GET", `/api/hands/${encodeURIComponent(handId)}/export`);
  const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: `${handId.replace("#", "-")}.json` });
  document.body.append(a);
  a.click();
  a.remove();
}
