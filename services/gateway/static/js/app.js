// The web client's entry point: session (a guest at first), language, the header, and a
// hash router: #/lobby, #/table/<id>, #/join/<id>/<code>, #/replay/<hand>, #/ratings, #/history.
import { announce } from "./a11y.js";
import { api, ensureSession, saveSession, session } from "./api.js";
import { h } from "./board.js";
import { chooseLanguage, currentLanguage, serverMessage, setLanguage, t, translatePage } from "./i18n.js";
import { closeLobby, joinTable, openLobby } from "./lobby.js";
import { openHistory, openRatings } from "./pages.js";
import { closeReplay, openReplay } from "./replay.js";
import { followSeat, holdTable } from "./seating.js";
import { closeTable, openTable, practiceState } from "./table.js";

const main = () => document.getElementById("main");

function renderHeader() {
  const s = session();
  const who = document.getElementById("who");
  if (!who) return;
  who.replaceChildren();
  if (s && s.account) {
    who.append(h("span", { class: "who-name", dataset: { testid: "who" }, text: s.account.name + (s.account.guest ? ` (${t("auth.guest")})` : "") }));
    if (s.account.guest) {
      who.append(
        h("button", { class: "button secondary", type: "button", text: t("auth.login"), onclick: () => authDialog("login") }),
        h("button", { class: "button secondary", type: "button", text: t("auth.register"), onclick: () => authDialog("register") }),
      );
    } else {
      who.append(
        h("button", {
          class: "button secondary",
          type: "button",
          text: t("auth.logout"),
          onclick: async () => {
            await api("POST", "/api/auth/logout").catch(() => null);
            saveSession(null);
            await ensureSession();
            renderHeader();
            route();
          },
        }),
      );
    }
  }
  const langSelect = document.getElementById("lang");
  langSelect.value = currentLanguage();
}

function authDialog(mode) {
  const name = h("input", { name: "name", autocomplete: "username", required: true, minlength: "3", maxlength: "24" });
  const password = h("input", { name: "password", type: "password", autocomplete: mode === "login" ? "current-password" : "new-password", required: true, minlength: "8" });
  const notice = h("p", { class: "notice", role: "alert" });
  const dialog = h(
    "dialog",
    { class: "auth", "aria-label": t(`auth.${mode}`) },
    h(
      "form",
      {
        method: "dialog",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            const r = await api("POST", `/api/auth/${mode}`, { name: name.value, password: password.value });
            saveSession(r);
            dialog.close();
            dialog.remove();
            renderHeader();
            route();
          } catch (e) {
            notice.textContent = serverMessage(e.code, e.params, e.message);
          }
        },
      },
      h("h2", { text: t(`auth.${mode}`) }),
      mode === "register" ? h("p", { class: "muted", text: t("auth.register_help") }) : null,
      h("label", { class: "field" }, h("span", { text: t("auth.name") }), name),
      h("label", { class: "field" }, h("span", { text: t("auth.password") }), password),
      notice,
      h(
        "div",
        { class: "dialog-actions" },
        h("button", { class: "button primary", type: "submit", text: t(`auth.${mode}`) }),
        h("button", { class: "button secondary", type: "button", text: t("auth.cancel"), onclick: () => { dialog.close(); dialog.remove(); } }),
      ),
    ),
  );
  document.body.append(dialog);
  dialog.showModal();
  name.focus();
}

function closeAll() {
  closeLobby();
  closeTable();
  closeReplay();
}

async function route() {
  const hash = location.hash || "";
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const root = main();
  document.querySelectorAll("nav a").forEach((a) => a.removeAttribute("aria-current"));
  const mark = (name) => {
    const a = document.querySelector(`nav a[data-nav="${name}"]`);
    if (a) a.setAttribute("aria-current", "page");
  };
  closeAll();
  // Every page but a table follows the player's seat (seating.js); a table page holds it.
  holdTable(parts[0] === "table" && parts[1] ? parts[1] : null);
  if (parts[0] === "table" && parts[1]) {
    document.body.dataset.page = "table";
    openTable(root, parts[1]);
  } else if (parts[0] === "join" && parts[1]) {
    document.body.dataset.page = "lobby";
    mark("lobby");
    openLobby(root);
    await joinTable(parts[1], parts[2] || null, (e) => {
      const n = root.querySelector(".notice");
      if (n) n.textContent = serverMessage(e.code, e.params, e.message);
    });
  } else if (parts[0] === "replay" && parts[1]) {
    document.body.dataset.page = "replay";
    await openReplay(root, parts[1]);
  } else if (parts[0] === "ratings") {
    document.body.dataset.page = "ratings";
    mark("ratings");
    await openRatings(root);
  } else if (parts[0] === "history") {
    document.body.dataset.page = "history";
    mark("history");
    await openHistory(root);
  } else {
    document.body.dataset.page = "lobby";
    mark("lobby");
    openLobby(root);
  }
  if (document.body.dataset.page !== "table") followSeat();
  translatePage(document);
}

async function boot() {
  await setLanguage(chooseLanguage());
  // The skip link moves focus; it must not change the hash (the router owns it).
  document.querySelector(".skip").addEventListener("click", (e) => {
    e.preventDefault();
    main().focus();
  });
  document.getElementById("lang").addEventListener("change", async (e) => {
    await setLanguage(e.target.value, { remember: true });
    renderHeader();
    await route();
    announce(t("lang.changed"));
  });
  try {
    await ensureSession();
  } catch (e) {
    main().replaceChildren(h("p", { class: "notice", role: "alert", text: serverMessage(e.code || "offline", e.params || {}, e.message) }));
    return;
  }
  renderHeader();
  // Reopening the page resumes an unfinished practice hand on this device.
  const practice = practiceState();
  if (!location.hash && practice && !practice.finished) {
    location.hash = `#/table/${encodeURIComponent(practice.table_id)}`;
  }
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "1";
}

boot();
