// The web client's entry point: session (a guest at first), language, the header, and a
// hash router: #/lobby, #/table/<id>, #/join/<id>/<code>, #/replay/<hand>, #/ratings, #/history,
// #/player/<id> (a profile; #/player alone: one's own).
import { announce } from "./a11y.js";
import { api, ensureSession, saveSession, session } from "./api.js";
import { h } from "./board.js";
import { chooseLanguage, currentLanguage, serverMessage, setLanguage, t, translatePage } from "./i18n.js";
import { closeLobby, joinTable, openLobby } from "./lobby.js";
import { MAX_NAME, nameLength, nameOf, nameProblem } from "./names.js";
import { openHistory, openRatings } from "./pages.js";
import { closeProfile, openProfile } from "./profile.js";
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
  // "My profile" in the nav leads to the signed-in player's own page.
  const profileLink = document.querySelector('nav a[data-nav="profile"]');
  if (profileLink && s && s.account) profileLink.setAttribute("href", `#/player/${encodeURIComponent(s.account.id)}`);
  const langSelect = document.getElementById("lang");
  langSelect.value = currentLanguage();
}

// The phone's ☰ menu (hidden by CSS on wide screens, where the menu is the header's row).
function openMenu(open) {
  const header = document.querySelector("header.top");
  const toggle = document.getElementById("menu-toggle");
  if (!header || !toggle) return;
  header.classList.toggle("open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

function wireMenu() {
  const toggle = document.getElementById("menu-toggle");
  if (!toggle) return;
  toggle.addEventListener("click", () => openMenu(toggle.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && toggle.getAttribute("aria-expanded") === "true") {
      openMenu(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (e) => {
    if (!e.target.closest("header.top") || e.target.closest("#menu a")) openMenu(false);
  });
}

function authDialog(mode) {
  openMenu(false);
  // No length cap on the input: a name that is too long stays whole, with the reason shown.
  const registering = mode === "register";
  const count = registering ? h("span", { class: "muted name-count", id: "name-count", dataset: { testid: "name-count" }, "aria-live": "polite" }) : null;
  const name = h("input", { name: "name", autocomplete: "username", required: true, "aria-describedby": registering ? "name-count" : undefined });
  const password = h("input", { name: "password", type: "password", autocomplete: mode === "login" ? "current-password" : "new-password", required: true, minlength: "8" });
  const notice = h("p", { class: "notice", role: "alert", dataset: { testid: "auth-notice" } });
  // While registering, the length is checked as the player types, with the server's limits.
  const checkName = (final) => {
    if (!registering) return true;
    count.textContent = t("auth.name_count", { count: nameLength(nameOf(name.value)), max: MAX_NAME });
    const problem = nameProblem(name.value);
    const shown = problem && (final || problem.code === "name_too_long");
    name.setAttribute("aria-invalid", shown ? "true" : "false");
    notice.textContent = shown ? serverMessage(problem.code, problem.params) : "";
    return !problem;
  };
  if (registering) {
    name.addEventListener("input", () => checkName(false));
    checkName(false);
  }
  const dialog = h(
    "dialog",
    { class: "auth", "aria-label": t(`auth.${mode}`) },
    h(
      "form",
      {
        method: "dialog",
        onsubmit: async (ev) => {
          ev.preventDefault();
          if (!checkName(true)) return;
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
      h("label", { class: "field" }, h("span", { text: t("auth.name") }), name, count),
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
  closeProfile();
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
  } else if (parts[0] === "player") {
    document.body.dataset.page = "profile";
    const own = session() && session().account ? session().account.id : null;
    if (!parts[1] || parts[1] === own) mark("profile");
    await openProfile(root, parts[1] || own);
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
  window.addEventListener("hashchange", () => {
    openMenu(false); // a link in the phone's menu was followed
    route();
  });
  wireMenu();
  await route();
  document.body.dataset.ready = "1";
}

boot();
