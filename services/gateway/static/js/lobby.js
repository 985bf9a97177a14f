// The lobby: practice against computers, Quick Play, creating a table, joining by code, the
// public tables, and the last ten practice results kept in this browser.
import { api } from "./api.js";
import { h, playerName } from "./board.js";
import { announce } from "./a11y.js";
import { currentLanguage, serverMessage, t, translatePage } from "./i18n.js";
import { followSeat, pollNow, stopFollowing } from "./seating.js";
import { prefs, setPref } from "./storage.js";
import { practiceResults, practiceState } from "./table.js";

// The computers' strengths, weakest first (schemas/lobby.py Strength; services/bots).
export const STRENGTHS = ["easy", "normal", "strong", "expert"];

export function closeLobby() {
  stopFollowing();
}

function field(label, control) {
  return h("label", { class: "field" }, h("span", { text: label }), control);
}

function select(name, options, value) {
  const s = h("select", { name });
  for (const [v, text] of options) s.append(h("option", { value: v, selected: v === value, text }));
  return s;
}

export function openLobby(root) {
  closeLobby();
  root.replaceChildren();
  const notice = h("p", { class: "notice", role: "alert" });
  const fail = (e) => (notice.textContent = serverMessage(e.code || "http_error", e.params || {}, e.message));

  // Practice.
  const practice = practiceState();
  const pStrength = select("strength", STRENGTHS.map((s) => [s, t(`strength.${s}`)]), (practice && practice.strength) || "normal");
  const pPace = select("pace", ["slow", "normal", "fast"].map((s) => [s, t(`pace.${s}`)]), (practice && practice.pace) || "normal");
  const practiceBox = h(
    "section",
    { class: "card", "aria-labelledby": "practice-title" },
    h("h2", { id: "practice-title", text: t("practice.title") }),
    h("p", { text: t("practice.help") }),
    field(t("practice.strength"), pStrength),
    field(t("practice.pace"), pPace),
    h("button", {
      class: "button primary",
      type: "button",
      dataset: { action: "start-practice" },
      text: t("practice.start"),
      onclick: async (ev) => {
        ev.target.disabled = true;
        try {
          const r = await api("POST", "/api/practice", { strength: pStrength.value, pace: pPace.value });
          localStorage.setItem("mp.practice", JSON.stringify({ table_id: r.table_id, strength: pStrength.value, pace: pPace.value, started: Date.now(), paused: false }));
          location.hash = `#/table/${encodeURIComponent(r.table_id)}`;
        } catch (e) {
          fail(e);
          ev.target.disabled = false;
        }
      },
    }),
  );
  if (practice && !practice.finished) {
    practiceBox.append(
      h("a", { class: "button secondary", href: `#/table/${encodeURIComponent(practice.table_id)}`, dataset: { action: "resume-practice" }, text: t("practice.resume_hand") }),
    );
  }
  const results = practiceResults();
  const resultList = h("ol", { class: "results", "aria-label": t("practice.results"), dataset: { testid: "practice-results" } });
  for (const r of results) {
    resultList.append(
      h(
        "li",
        {},
        h("time", { datetime: new Date(r.at).toISOString(), text: new Date(r.at).toLocaleString(currentLanguage()) }),
        " · ",
        t("practice.result_line", { score: r.score > 0 ? `+${r.score}` : r.score, place: r.placement ?? "–", strength: t(`strength.${r.strength || "normal"}`) }),
        " ",
        h("a", { href: `#/replay/${encodeURIComponent(r.hand_id)}`, text: t("history.replay") }),
      ),
    );
  }
  practiceBox.append(h("h3", { text: t("practice.results") }), results.length ? resultList : h("p", { class: "muted", text: t("practice.no_results") }));

  // Quick Play.
  // Not a live region: it counts the seconds. Joining and leaving are announced once.
  const quickStatus = h("p", { class: "muted", dataset: { testid: "quick-status" } });
  // The computers that fill the table after a minute without a match (remembered).
  const qComputers = select("quick-computers", STRENGTHS.map((s) => [s, t(`strength.${s}`)]), prefs().quickComputers || "normal");
  qComputers.addEventListener("change", () => setPref("quickComputers", qComputers.value));
  const quickBox = h(
    "section",
    { class: "card", "aria-labelledby": "quick-title" },
    h("h2", { id: "quick-title", text: t("quick.title") }),
    h("p", { text: t("quick.help") }),
    field(t("quick.computers"), qComputers),
    h("button", {
      class: "button primary",
      type: "button",
      dataset: { action: "quick-play" },
      text: t("quick.join"),
      onclick: async () => {
        try {
          await api("POST", "/api/quickplay", { computers_after_s: 60, computers: qComputers.value });
          announce(t("quick.joined"));
          refresh();
        } catch (e) {
          fail(e);
        }
      },
    }),
    h("button", {
      class: "button secondary",
      type: "button",
      dataset: { action: "leave-queue" },
      text: t("quick.leave"),
      onclick: async () => {
        try {
          await api("DELETE", "/api/quickplay");
          announce(t("quick.left"));
          refresh();
        } catch (e) {
          fail(e);
        }
      },
    }),
    quickStatus,
  );

  // Create a table.
  const cPublic = select("visibility", [["public", t("options.public")], ["private", t("options.private")]], "public");
  const cRated = select("rated", [["casual", t("options.casual")], ["rated", t("options.rated")]], "casual");
  const cClock = select("clock", [["", t("clock.untimed")], ...["bullet", "blitz", "standard", "relaxed"].map((c) => [c, t(`clock.${c}`)])], "standard");
  const cComputers = select("computers", [["", t("options.no_computers")], ...STRENGTHS.map((s) => [s, t("options.computers", { strength: t(`strength.${s}`) })])], "");
  const pacing = select("pace", ["slow", "normal", "fast"].map((s) => [s, t(`pace.${s}`)]), "normal");
  const createBox = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "create-title",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const options = {
          public: cPublic.value === "public",
          rated: cRated.value === "rated",
          clock: cClock.value || null,
          computers: cComputers.value || null,
          pace: pacing.value,
        };
        try {
          const r = await api("POST", "/api/tables", { options });
          location.hash = `#/table/${encodeURIComponent(r.table_id)}`;
        } catch (e) {
          fail(e);
        }
      },
    },
    h("h2", { id: "create-title", text: t("create.title") }),
    field(t("create.visibility"), cPublic),
    field(t("create.rated"), cRated),
    field(t("create.clock"), cClock),
    field(t("create.computers"), cComputers),
    field(t("practice.pace"), pacing),
    h("button", { class: "button primary", type: "submit", dataset: { action: "create-table" }, text: t("create.submit") }),
  );

  // Join by code.
  const jTable = h("input", { name: "table", autocomplete: "off", required: true });
  const jCode = h("input", { name: "code", autocomplete: "off" });
  const joinBox = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "join-title",
      onsubmit: async (ev) => {
        ev.preventDefault();
        await joinTable(jTable.value.trim(), jCode.value.trim() || null, fail);
      },
    },
    h("h2", { id: "join-title", text: t("join.title") }),
    field(t("join.table"), jTable),
    field(t("join.code"), jCode),
    h("button", { class: "button primary", type: "submit", dataset: { action: "join-code" }, text: t("join.submit") }),
  );

  // Public tables.
  const list = h("ul", { class: "table-list", "aria-labelledby": "tables-title", dataset: { testid: "public-tables" } });
  const tablesBox = h("section", { class: "card wide", "aria-labelledby": "tables-title" }, h("h2", { id: "tables-title", text: t("lobby.tables") }), list);

  root.append(
    h("h1", { class: "sr-only", text: t("lobby.title") }),
    notice,
    h("div", { class: "lobby-grid" }, practiceBox, quickBox, createBox, joinBox, tablesBox),
  );
  translatePage(root);

  let lastVersion = -1;
  const refresh = () => pollNow();
  // Every answer of the seat poll (seating.js, which also takes the page to the table).
  function show(data, error) {
    if (error) {
      fail(error);
      return;
    }
    if (data.queue_since_ms) {
      quickStatus.textContent = t("quick.waiting", { s: Math.round((Date.now() - data.queue_since_ms) / 1000) });
    } else quickStatus.textContent = "";
    if (data.table_id && !(practice && practice.table_id === data.table_id && practice.finished)) {
      quickStatus.replaceChildren(h("a", { href: `#/table/${encodeURIComponent(data.table_id)}`, class: "button primary", dataset: { action: "my-table" }, text: t("lobby.my_table") }));
    }
    if (data.version === lastVersion) return;
    lastVersion = data.version;
    list.replaceChildren();
    if (!data.tables.length) list.append(h("li", { class: "muted", text: t("lobby.no_tables") }));
    // Open tables first (to join), then the ones in play (to watch), each oldest first.
    const open = data.tables.filter((tb) => tb.status === "open");
    const live = data.tables.filter((tb) => tb.status !== "open");
    for (const tb of [...open, ...live]) {
      const o = tb.options;
      const playing = tb.status !== "open";
      const names = tb.seated.map((s) => (s.computer ? playerName(s.player, {}) : s.name));
      // Named after its creator (in play, the first seat may be a computer's).
      const host = tb.seated.find((s) => s.player === tb.creator) || tb.seated.find((s) => !s.computer) || tb.seated[0];
      const hostName = host ? host.name : "?";
      const watch = t("lobby.watch_table", { name: hostName });
      list.append(
        h(
          "li",
          { class: playing ? "table-row live" : "table-row", dataset: { tableId: tb.table_id, status: tb.status } },
          h("span", { class: "table-name", text: t("lobby.table_of", { name: hostName }) }),
          playing ? h("span", { class: "badge live-badge", text: t(`lobby.status_${tb.status}`) }) : null,
          h("span", {
            class: "muted",
            text: [o.rated ? t("options.rated") : t("options.casual"), o.clock ? t(`clock.${o.clock}`) : t("clock.untimed"), playing ? names.join(", ") : t("lobby.seats", { n: tb.seated.length })].join(" · "),
          }),
          playing ? null : h("button", { class: "button", type: "button", dataset: { action: "join-table" }, text: t("lobby.join"), onclick: () => joinTable(tb.table_id, null, fail) }),
          h("a", { class: playing ? "button" : "button secondary", href: `#/table/${encodeURIComponent(tb.table_id)}`, dataset: { action: "watch" }, "aria-label": playing ? watch : null, text: t("lobby.watch") }),
        ),
      );
    }
  }
  followSeat(show);
}

export async function joinTable(tableId, code, fail) {
  try {
    await api("POST", `/api/tables/${encodeURIComponent(tableId)}/join`, { code });
    location.hash = `#/table/${encodeURIComponent(tableId)}`;
  } catch (e) {
    if (e.code === "already_seated" && e.params && e.params.table_id === tableId) {
      location.hash = `#/table/${encodeURIComponent(tableId)}`;
      return;
    }
    fail(e);
  }
}

export { playerName };
