// The live table: one WebSocket (protocol v1, docs/gateway.md), the board, the actions the
// seat may take now (from SeatView.legal_actions), countdowns, the event log, the
// settlement, keyboard play, screen-reader announcements, and practice pause/resume and
// results.
//
// Keyboard (docs/accessibility.md): the hand is one tab stop, ←/→/Home/End move over its
// tiles, Enter/Space discards (or, in the exchange, selects) the focused tile; D discards the
// drawn tile; E passes the three selected; 1/2/3 declare the missing suit; H hu, P pung,
// K kong, N or Esc pass; ? opens the key list. Every action button shows its key.
import { announce, clearAnnouncements } from "./a11y.js";
import { api, session } from "./api.js";
import { clockText, formatSeconds, h, phaseText, playerName, renderBoard, updateClock } from "./board.js";
import { serverMessage, t } from "./i18n.js";
import { renderSettlement } from "./settlement.js";
import { suitLabel, tileLabel } from "./tiles.js";

const PROTOCOL = 1;
const TIME_LOW_MS = 5000;
// Close reasons after which the client stops (docs/gateway.md) and shows why, with a way on.
const STOPPED = ["forbidden", "table_closed", "opened_elsewhere", "unauthorized", "unsupported_version", "session_ended", "session_expired"];
// Of those, the ones that need a fresh page (a new session, or the new client).
const RELOAD = ["unauthorized", "unsupported_version", "session_ended", "session_expired"];
let current = null;

export function closeTable() {
  if (current) current.close();
  current = null;
}

export function openTable(root, tableId) {
  closeTable();
  current = new TableClient(root, tableId);
  current.connect();
  return current;
}

// Practice bookkeeping (RULES.md §9: the browser keeps the last ten results).
export function practiceState() {
  try {
    return JSON.parse(localStorage.getItem("mp.practice") || "null");
  } catch {
    return null;
  }
}

export function practiceResults() {
  try {
    return JSON.parse(localStorage.getItem("mp.results") || "[]");
  } catch {
    return [];
  }
}

function saveResult(result) {
  const results = practiceResults().filter((r) => r.hand_id !== result.hand_id);
  results.unshift(result);
  localStorage.setItem("mp.results", JSON.stringify(results.slice(0, 10)));
}

// The keys, in the order the help lists them: [key shown, catalogue key].
const KEY_HELP = [
  ["← →", "keys.move"],
  ["Home End", "keys.ends"],
  ["Enter", "keys.enter"],
  ["D", "keys.drawn"],
  ["E", "keys.exchange"],
  ["1 2 3", "keys.missing"],
  ["H", "keys.hu"],
  ["P", "keys.pung"],
  ["K", "keys.kong"],
  ["N Esc", "keys.pass"],
  ["?", "keys.help"],
];

class TableClient {
  constructor(root, tableId) {
    this.root = root;
    this.tableId = tableId;
    this.ws = null;
    this.closed = false;
    this.welcome = null;
    this.frame = null; // the latest view frame
    this.handId = null;
    this.events = new Map();
    this.eventsLoaded = false; // the hand's events so far arrived: later ones are news
    this.finished = null; // {handId, events, names, me}: the last hand that ended
    this.table = null; // the latest table frame
    this.selected = new Set();
    this.sentFor = null;
    this.notice = "";
    this.rtt = 0;
    this.offset = 0;
    this.retry = 0;
    this.pings = new Map();
    this.focusKey = null; // the hand tile holding the tab stop
    this.helpOpen = false;
    this.handFocused = false; // focus went to the hand once, on opening the table
    this.told = { decision: null, timeLow: null, status: "connecting" };
    const practice = practiceState();
    this.practice = practice && practice.table_id === tableId ? practice : null;
    this.paused = false; // follows view.paused: the server holds a practice hand's pause
    this.showResult = false;
    this.stopped = null; // the close reason the client stopped at (STOPPED)
    this.confirmLeave = false; // the "leave this hand?" dialog is open
    this.keyHandler = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keyHandler);
    this.focusHandler = (e) => {
      const key = e.target && e.target.dataset ? e.target.dataset.key : null;
      if (key && this.root.contains(e.target)) this.rove(e.target);
    };
    this.root.addEventListener("focusin", this.focusHandler);
    this.ticker = setInterval(() => this.tick(), 200);
    this.pinger = setInterval(() => this.ping(), 5000);
    clearAnnouncements();
    this.render();
  }

  close() {
    this.closed = true;
    clearInterval(this.ticker);
    clearInterval(this.pinger);
    document.removeEventListener("keydown", this.keyHandler);
    this.root.removeEventListener("focusin", this.focusHandler);
    if (this.ws) this.ws.close();
  }

  // --- the socket ---------------------------------------------------------------------------

  connect() {
    if (this.closed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    this.status = "connecting";
    ws.onopen = () => {
      const s = session();
      const hello = { type: "hello", v: PROTOCOL, token: s ? s.token : "", table_id: this.tableId };
      const last = this.lastSeq();
      if (this.handId && last > 0) Object.assign(hello, { hand_id: this.handId, last_seq: last });
      ws.send(JSON.stringify(hello));
      this.ping();
    };
    ws.onmessage = (m) => this.onFrame(JSON.parse(m.data));
    ws.onclose = (e) => {
      if (ws !== this.ws) return; // an old socket, replaced by "use here"
      this.status = "offline";
      this.renderStatus();
      if (this.closed) return;
      if (e.code === 1008 && STOPPED.includes(e.reason)) {
        this.stop(e.reason);
        return;
      }
      // A close reason is a code (docs/gateway.md): say it in the chosen language.
      if (e.reason && !this.notice) {
        this.setNotice(serverMessage(e.reason, {}));
        this.closeNotice = true; // cleared once the socket is back
      }
      this.retry = Math.min(this.retry + 1, 6);
      setTimeout(() => this.connect(), 300 * 2 ** this.retry);
    };
  }

  // The server closed the table to this client for good (or until "use here").
  stop(reason) {
    this.stopped = reason;
    this.status = "stopped"; // not "reconnecting": it does not
    this.notice = "";
    this.render();
    if (reason !== "opened_elsewhere") {
      const back = this.root.querySelector('[data-action="to-lobby"]');
      if (back) back.focus();
    }
  }

  // "Use here": open the table again, which moves the seat back to this tab.
  useHere() {
    this.stopped = null;
    this.retry = 0;
    this.connect();
    this.render();
  }

  lastSeq() {
    let n = 0;
    while (this.events.has(n + 1)) n++;
    return n;
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  ping() {
    const t0 = performance.now();
    this.pings.set(t0, Date.now());
    this.send({ type: "ping", t: t0 });
  }

  serverNow() {
    return Date.now() + this.offset;
  }

  setNotice(text) {
    this.notice = text;
    if (text) announce(text, { assertive: true });
  }

  onFrame(f) {
    switch (f.type) {
      case "welcome":
        this.welcome = f;
        this.status = "online";
        this.retry = 0;
        this.offset = f.server_ms - Date.now();
        if (this.closeNotice) this.notice = "";
        this.closeNotice = false;
        break;
      case "pong": {
        const sent = this.pings.get(f.t);
        this.pings.delete(f.t);
        if (sent !== undefined) {
          this.rtt = performance.now() - f.t;
          this.offset = f.server_ms + this.rtt / 2 - Date.now();
        }
        return;
      }
      case "table":
        this.table = f;
        break;
      case "events":
        this.onEvents(f);
        break;
      case "view":
        if (this.frame && (this.frame.hand_id !== f.hand_id || this.frame.decision_seq !== f.decision_seq)) {
          this.selected.clear();
        }
        if (!this.frame || this.frame.decision_seq !== f.decision_seq || this.frame.hand_id !== f.hand_id) {
          this.sentFor = null;
        }
        if (this.frame && this.frame.hand_id !== f.hand_id) this.focusKey = null;
        this.frame = f;
        this.followPause(f.view);
        if (f.view.phase === "ended") this.handEnded(f);
        break;
      case "rejected":
      case "error":
        this.sentFor = null;
        if (STOPPED.includes(f.code) && !f.command_id) return; // the close that follows says it
        this.setNotice(serverMessage(f.code, f.params, f.reason));
        break;
    }
    this.render();
    if (f.type === "view") this.tellDecision();
  }

  onEvents(f) {
    const fresh = [];
    if (f.hand_id !== this.handId) {
      // A new hand is dealt only once every human asked for it: the last result goes.
      if (this.handId !== null) this.newHand();
      this.handId = f.hand_id;
      this.events = new Map();
      this.eventsLoaded = false;
    }
    for (const e of f.events) {
      if (this.eventsLoaded && !this.events.has(e.seq)) fresh.push(e);
      this.events.set(e.seq, e);
    }
    this.eventsLoaded = true;
    const last = f.events[f.events.length - 1];
    if (last && last.type === "hand_ended") this.showResult = true;
    // News for screen readers: what happened since the last frame (not the backlog).
    if (this.frame) for (const e of fresh) announce(describe(e, this.frame));
  }

  newHand() {
    this.showResult = false;
    this.confirmLeave = false;
    if (this.practice && this.practice.finished) {
      this.practice = { ...this.practice, finished: false };
      localStorage.setItem("mp.practice", JSON.stringify(this.practice));
    }
  }

  // Says once per decision what the seat is asked to do, with the keys that do it.
  tellDecision() {
    const legal = this.legal();
    if (!this.frame || !legal.length) return;
    const key = `${this.frame.hand_id}/${this.frame.decision_seq}`;
    if (this.told.decision === key) return;
    this.told.decision = key;
    const buttons = [...this.root.querySelectorAll(".actions button[data-action]")]
      .filter((b) => !b.disabled)
      .map((b) => `${b.querySelector(".label") ? b.querySelector(".label").textContent : b.textContent} (${b.getAttribute("aria-keyshortcuts")})`);
    const what = phaseText(this.frame.view, this.frame.view.seat, this.frame.names);
    announce(buttons.length ? t("announce.decision_keys", { what, keys: buttons.join(", ") }) : what);
  }

  handEnded(frame) {
    const events = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    this.finished = { handId: frame.hand_id, events, names: frame.names, me: frame.view.seat, view: frame.view };
    const seat = frame.view.seat;
    if (seat !== null && this.told.ended !== frame.hand_id) {
      this.told.ended = frame.hand_id;
      const score = frame.view.players[seat].score;
      announce(t("announce.ended", { score: score > 0 ? `+${score}` : String(score) }));
    }
    if (this.practice && seat !== null) {
      const ended = events.find((e) => e.type === "hand_ended");
      saveResult({
        hand_id: frame.hand_id,
        table_id: this.tableId,
        at: Date.now(),
        score: frame.view.players[seat].score,
        placement: ended ? ended.placements[seat] : null,
        end: frame.view.end,
        strength: this.practice.strength,
        pace: this.practice.pace,
      });
      localStorage.setItem("mp.practice", JSON.stringify({ ...this.practice, finished: true, paused: false }));
      this.practice = { ...this.practice, finished: true };
      this.paused = false;
    }
  }

  // --- acting ------------------------------------------------------------------------------

  legal() {
    if (!this.frame || this.paused) return [];
    return this.frame.view.legal_actions || [];
  }

  act(body) {
    if (!this.frame || this.sentFor === this.key()) return;
    this.sentFor = this.key();
    this.notice = "";
    const id = `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    this.send({
      type: "command",
      command_id: id,
      decision_seq: this.frame.decision_seq,
      hand_id: this.frame.hand_id,
      body,
    });
    this.render();
  }

  key() {
    return this.frame ? `${this.frame.hand_id}/${this.frame.decision_seq}/${this.frame.seq}` : "";
  }

  onTile(tile, key) {
    const legal = this.legal();
    this.focusKey = key;
    if (legal.some((c) => c.type === "choose_exchange")) {
      if (this.selected.has(key)) this.selected.delete(key);
      else if (this.selected.size < 3) this.selected.add(key);
      this.render();
      announce(t("actions.exchange_hint", { n: this.selected.size }));
      return;
    }
    if (legal.some((c) => c.type === "discard" && c.tile === tile)) this.act({ type: "discard", tile });
  }

  selectedTiles() {
    return [...this.selected].map((k) => {
      const node = this.root.querySelector(`[data-key="${k}"]`);
      return node ? node.dataset.tile : null;
    });
  }

  exchangeChoice() {
    const picked = this.selectedTiles().filter(Boolean).sort();
    if (picked.length !== 3) return null;
    return this.legal().find((c) => c.type === "choose_exchange" && [...c.tiles].sort().join() === picked.join()) || null;
  }

  // Pause and resume are commands (docs/gateway.md): the server stops the computers and
  // the dialog follows the view it sends back, on every device and after a reload.
  setPaused(paused) {
    if (!this.frame) return;
    const id = `${paused ? "p" : "r"}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    this.send({ type: "command", command_id: id, hand_id: this.frame.hand_id, body: { type: paused ? "pause" : "resume" } });
  }

  followPause(view) {
    const paused = Boolean(view.paused);
    if (this.paused && !paused) this.told.decision = null; // say again what the seat is asked
    this.paused = paused;
  }

  // --- keyboard ----------------------------------------------------------------------------

  handTiles() {
    return [...this.root.querySelectorAll(".my-hand button.tile")];
  }

  // The roving tab stop of the hand follows focus.
  rove(node) {
    this.focusKey = node.dataset.key;
    for (const n of this.handTiles()) n.tabIndex = n === node ? 0 : -1;
  }

  focusHand() {
    const tiles = this.handTiles();
    const stop = tiles.find((n) => n.tabIndex === 0) || tiles[0];
    if (stop) stop.focus();
    return Boolean(stop);
  }

  onKey(e) {
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector("dialog[open]")) return; // the dialog has the keyboard
    const legal = this.legal();
    const find = (type) => legal.find((c) => c.type === type);
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const press = (sel) => {
      const b = this.root.querySelector(sel);
      if (b && !b.disabled) {
        e.preventDefault();
        b.click();
        return true;
      }
      return false;
    };
    const active = document.activeElement;
    if (["ArrowLeft", "ArrowRight", "Home", "End", "ArrowUp", "ArrowDown"].includes(k)) {
      const inActions = active && active.closest && active.closest(".actions");
      const group = inActions ? [...this.root.querySelectorAll(".actions button:not([disabled])")] : this.handTiles();
      if (!group.length) return;
      const at = group.indexOf(active);
      if (at < 0 && !inActions) {
        if (k === "ArrowUp" || k === "ArrowDown") return; // leave page scrolling alone
        e.preventDefault();
        this.focusHand();
        return;
      }
      let next = at;
      if (k === "Home") next = 0;
      else if (k === "End") next = group.length - 1;
      else if (k === "ArrowRight" || k === "ArrowDown") next = (at + 1) % group.length;
      else next = (at - 1 + group.length) % group.length;
      e.preventDefault();
      group[next].focus();
      return;
    }
    if (k === "?") {
      e.preventDefault();
      this.helpOpen = !this.helpOpen;
      this.render();
      const help = this.root.querySelector(".keys summary");
      if (help && this.helpOpen) help.focus();
      return;
    }
    if (k === "h" && find("hu")) press('[data-action="hu"]');
    else if (k === "p" && find("pung")) press('[data-action="pung"]');
    else if (k === "k") press('[data-action="claim_kong"], [data-action="kong"]');
    else if ((k === "n" || k === "Escape") && find("pass")) press('[data-action="pass"]');
    else if (k === "e") press('[data-action="exchange"]');
    else if (k === "d") press(".my-hand button.tile.drawn.legal");
    else if (["1", "2", "3"].includes(k) && find("declare_missing")) press(`[data-action="missing-${"mps"[Number(k) - 1]}"]`);
  }

  // --- drawing -----------------------------------------------------------------------------

  renderStatus() {
    const s = this.root.querySelector(".connection");
    if (s) {
      s.textContent = t(`connection.${this.status || "connecting"}`);
      s.className = `connection ${this.status}`;
    }
    if (this.status !== this.told.status) {
      // Only changes worth hearing: losing the connection, and getting it back.
      if (this.status === "offline" || (this.status === "online" && this.told.status === "offline")) {
        announce(t(`connection.${this.status}`));
      }
      this.told.status = this.status;
    }
  }

  tick() {
    const deal = this.root.querySelector("[data-deal-countdown]");
    if (deal) deal.textContent = t("table.deal_in", { s: Math.max(0, Math.ceil((Number(deal.dataset.dealCountdown) - this.serverNow()) / 1000)) });
    if (!this.frame) return;
    const view = this.frame.view;
    this.root.querySelectorAll("[data-clock-seat]").forEach((node) => {
      const c = clockText(view, Number(node.dataset.clockSeat), this.serverNow(), this.rtt / 2);
      if (c) updateClock(node, c);
    });
    if (view.seat === null) return;
    const mine = clockText(view, view.seat, this.serverNow(), this.rtt / 2);
    const cd = this.root.querySelector("[data-countdown]");
    if (cd && mine && mine.running) cd.textContent = formatSeconds(mine.remaining);
    // A screen reader hears once per decision that time is running out.
    if (mine && mine.running && mine.remaining < TIME_LOW_MS && this.legal().length && this.told.timeLow !== this.key()) {
      this.told.timeLow = this.key();
      announce(t("announce.time_low", { s: Math.max(0, Math.ceil(mine.remaining / 1000)) }), { assertive: true });
    }
  }

  render() {
    const active = document.activeElement;
    const hadFocus = !active || active === document.body || this.root.contains(active);
    const focusedKey = active && active.dataset ? active.dataset.key : null;
    const focusedAction = active && active.dataset ? active.dataset.action : null;
    const focusedIndex = hadFocus && !focusedKey && !focusedAction ? this.focusables().indexOf(active) : -1;
    const root = this.root;
    root.replaceChildren();
    const dialogOpen = this.stopped || this.confirmLeave || this.paused || (this.showResult && this.finished);
    const top = h(
      "div",
      { class: "table-bar" },
      h("a", { href: "#/lobby", class: "button secondary", text: t("table.to_lobby") }),
      h("h1", { class: "table-id", text: t("table.id", { id: this.tableId }) }),
      this.frame ? h("span", { class: "hand-id", text: t("table.hand", { n: this.frame.hand_id.split("#")[1] || "1" }) }) : null,
      this.welcome && this.welcome.role === "spectator" ? h("span", { class: "badge", text: t("table.spectating") }) : null,
      this.practice && !this.practice.finished
        ? h("button", {
            class: "button",
            type: "button",
            dataset: { action: "pause" },
            "aria-pressed": this.paused ? "true" : "false",
            onclick: () => this.setPaused(!this.paused),
            text: this.paused ? t("practice.resume") : t("practice.pause"),
          })
        : null,
      this.leaveButton(),
      h("span", { class: "connection" }),
    );
    root.append(top);
    this.renderStatus();
    if (this.stopped && this.stopped !== "opened_elsewhere") {
      root.append(this.goneBox(this.stopped));
      return;
    }
    if (!this.frame) {
      root.append(this.waiting());
      if (this.stopped) this.showDialog(this.elsewhereDialog(), focusedAction);
      else if (hadFocus) this.restoreFocus(null, focusedAction, focusedIndex, active);
      return;
    }
    const frame = this.frame;
    const view = frame.view;
    const me = view.seat;
    const legal = this.legal();
    const board = h("div", { class: "board-wrap" });
    renderBoard(board, view, {
      me,
      names: frame.names,
      legal,
      onTile: me !== null && !this.paused ? (tile, key) => this.onTile(tile, key) : null,
      selected: this.selected,
      serverNow: this.serverNow(),
      lag: this.rtt / 2,
      focusKey: this.focusKey,
    });
    root.append(board);
    root.append(this.actions(view, legal));
    if (this.notice) root.append(h("p", { class: "notice", dataset: { testid: "notice" }, text: this.notice }));
    if (me !== null) root.append(this.keyHelp());
    const side = h("div", { class: "side" });
    side.append(this.log(frame));
    if (this.finished) {
      side.append(renderSettlement(this.finished.events, this.finished.names, this.finished.me, { id: "settlement" }));
    }
    root.append(side);
    let dialog = null;
    if (this.stopped) dialog = this.elsewhereDialog();
    else if (this.confirmLeave) dialog = this.leaveDialog();
    else if (this.paused) dialog = this.pausedDialog();
    else if (this.showResult && this.finished) dialog = this.resultDialog();
    if (dialog) {
      root.append(dialog);
      dialog.showModal(); // focus moves in; the page behind is inert
    }
    if (!dialogOpen && hadFocus) this.restoreFocus(focusedKey, focusedAction, focusedIndex, active);
    else if (dialog && focusedAction) {
      const again = dialog.querySelector(`[data-action="${focusedAction}"]`);
      if (again) again.focus();
    }
    this.tick();
  }

  // After a redraw, focus goes back where it was: the same hand tile or button, else the
  // hand's tab stop or the first action (so a keyboard player never loses the table). On
  // opening the table, focus goes to the hand once it is dealt.
  restoreFocus(key, action, index, before) {
    const onBody = !before || before === document.body;
    if (key) {
      const again = this.root.querySelector(`.my-hand [data-key="${key}"]`);
      if (again) again.focus();
      else this.focusHand();
      return;
    }
    if (action) {
      const again = this.root.querySelector(`[data-action="${action}"]:not([disabled])`);
      const first = this.root.querySelector(".actions button:not([disabled])");
      if (again) again.focus();
      else if (!this.focusHand() && first) first.focus();
      return;
    }
    if (index >= 0) {
      const again = this.focusables()[index];
      if (again) again.focus();
      return;
    }
    if (onBody && !this.handFocused && this.focusHand()) this.handFocused = true;
  }

  focusables() {
    return [...this.root.querySelectorAll("a[href], button, summary, input, select, [tabindex='0']")];
  }

  showDialog(dialog, focusedAction) {
    this.root.append(dialog);
    dialog.showModal();
    const again = focusedAction && dialog.querySelector(`[data-action="${focusedAction}"]`);
    if (again) again.focus();
  }

  // The table cannot be shown here (STOPPED, or a table that has ended): say why, and the
  // way back to the lobby.
  goneBox(code) {
    return h(
      "section",
      { class: "waiting gone", role: "alert", "aria-labelledby": "gone-title", dataset: { testid: "table-gone", code } },
      h("h2", { id: "gone-title", text: t(`table.gone_${code}`) }),
      h("p", { text: serverMessage(code, {}) }),
      h(
        "div",
        { class: "waiting-actions" },
        RELOAD.includes(code)
          ? h("button", { class: "button primary", type: "button", dataset: { action: "to-lobby" }, onclick: () => { location.hash = "#/lobby"; location.reload(); }, text: t("table.back_to_lobby") })
          : h("a", { class: "button primary", href: "#/lobby", dataset: { action: "to-lobby" }, text: t("table.back_to_lobby") }),
      ),
    );
  }

  // Another tab (or device) of this player opened the table and took the seat.
  elsewhereDialog() {
    return h(
      "dialog",
      { class: "overlay", "aria-labelledby": "elsewhere-title", "aria-describedby": "elsewhere-help", dataset: { testid: "opened-elsewhere" }, oncancel: (e) => e.preventDefault() },
      h(
        "div",
        { class: "overlay-box" },
        h("h2", { id: "elsewhere-title", text: t("table.elsewhere_title") }),
        h("p", { id: "elsewhere-help", text: t("table.elsewhere_help") }),
        h(
          "div",
          { class: "result-actions" },
          h("button", { class: "button primary", type: "button", autofocus: true, dataset: { action: "use-here" }, onclick: () => this.useHere(), text: t("table.use_here") }),
          h("a", { class: "button secondary", href: "#/lobby", dataset: { action: "to-lobby" }, text: t("table.back_to_lobby") }),
        ),
      ),
    );
  }

  pausedDialog() {
    const dialog = h(
      "dialog",
      { class: "overlay", "aria-labelledby": "paused-title", oncancel: (e) => e.preventDefault() },
      h(
        "div",
        { class: "overlay-box" },
        h("h2", { id: "paused-title", text: t("practice.paused") }),
        h("p", { text: t("practice.paused_help") }),
        h("button", { class: "button primary", type: "button", autofocus: true, dataset: { action: "resume" }, onclick: () => this.setPaused(false), text: t("practice.resume") }),
      ),
    );
    return dialog;
  }

  dismissResult() {
    this.showResult = false;
    this.render();
    const settlement = this.root.querySelector("#settlement");
    if (settlement) settlement.focus();
  }

  resultDialog() {
    const f = this.finished;
    const me = f.me;
    const view = f.view;
    const score = me !== null ? view.players[me].score : null;
    const box = h(
      "div",
      { class: "overlay-box result" },
      h("h2", { id: "result-title", text: t("result.title") }),
      me !== null ? h("p", { class: "result-score", dataset: { testid: "result-score" }, text: t("result.score", { score: score > 0 ? `+${score}` : score }) }) : null,
      this.againStatus(),
      this.totals(f),
      renderSettlement(f.events, f.names, me),
      h("div", { class: "result-actions" }, ...this.resultActions(f)),
    );
    return h(
      "dialog",
      {
        class: "overlay",
        "aria-labelledby": "result-title",
        dataset: { testid: "result" },
        oncancel: (e) => {
          e.preventDefault();
          this.dismissResult();
        },
      },
      box,
    );
  }

  me() {
    const s = session();
    return s && s.account ? s.account.id : null;
  }

  // Whether this player holds a seat at the table now (the lobby's word).
  seatedHere() {
    const tf = this.table;
    return Boolean(tf && this.welcome && this.welcome.role === "player" && tf.seated.some((s) => s.player === this.me()));
  }

  // After a hand: a casual table offers Play again (dealt once every human asked); a rated
  // or Quick Play table is over, and its players are free at once.
  resultActions(f) {
    const tf = this.table;
    const seated = this.seatedHere();
    const between = seated && tf.status === "results" && tf.play_again;
    const pressed = between && tf.ready.includes(this.me());
    const over = !tf || tf.status === "closed" || (!tf.play_again && tf.status !== "open");
    const actions = [];
    if (between) {
      actions.push(
        h("button", { class: "button primary", type: "button", disabled: pressed, dataset: { action: "play-again" }, onclick: () => this.playAgain(), text: pressed ? t("result.again_waiting") : t("result.again") }),
        h("button", { class: "button secondary", type: "button", dataset: { action: "leave-table" }, onclick: () => this.leave(), text: t("table.leave") }),
      );
    } else if (over && this.welcome && this.welcome.role === "player") {
      actions.push(
        h("button", { class: "button primary", type: "button", dataset: { action: "quick-play-again" }, onclick: () => this.quickPlayAgain(), text: t("result.quick_again") }),
        h("a", { class: "button secondary", href: "#/lobby", dataset: { action: "to-lobby" }, text: t("table.back_to_lobby") }),
      );
    }
    // Focus starts on Close, not on Play again: a key pressed for the last discard must not
    // deal the next hand before the player has read the result.
    actions.push(h("button", { class: "button secondary", type: "button", autofocus: true, dataset: { action: "dismiss" }, onclick: () => this.dismissResult(), text: t("result.close") }));
    if (!between && !over) actions.push(h("a", { class: "button secondary", href: "#/lobby", dataset: { action: "to-lobby" }, text: t("table.to_lobby") }));
    actions.push(h("a", { class: "button secondary", href: `#/replay/${encodeURIComponent(f.handId)}`, dataset: { action: "replay" }, text: t("result.replay") }));
    return actions;
  }

  // The result closed: it can be shown again, and Play again and Leave stay at hand.
  betweenHands() {
    const tf = this.table;
    const out = [h("button", { class: "button", type: "button", dataset: { action: "show-result" }, onclick: () => { this.showResult = true; this.render(); }, text: t("result.show") })];
    if (this.seatedHere() && tf.status === "results" && tf.play_again) {
      const pressed = tf.ready.includes(this.me());
      out.push(
        h("button", { class: "button primary", type: "button", disabled: pressed, dataset: { action: "play-again" }, onclick: () => this.playAgain(), text: pressed ? t("result.again_waiting") : t("result.again") }),
        h("button", { class: "button secondary", type: "button", dataset: { action: "leave-table" }, onclick: () => this.leave(), text: t("table.leave") }),
      );
    }
    return out;
  }

  // The running totals of the hands played together at this table (casual tables).
  totals(f) {
    const tf = this.table;
    if (!tf || !tf.play_again || !tf.hands_played || !Object.keys(tf.totals).length) return null;
    const names = Object.fromEntries(tf.seated.map((s) => [s.player, s.name]));
    const rows = Object.entries(tf.totals).sort((a, b) => b[1] - a[1]);
    const fmt = (n) => (n > 0 ? `+${n}` : String(n));
    return h(
      "section",
      { class: "totals", "aria-labelledby": "totals-title", dataset: { testid: "totals" } },
      h("h3", { id: "totals-title", text: t("result.totals", { n: tf.hands_played }) }),
      h(
        "table",
        { class: "settlement-table" },
        h("tbody", {}, ...rows.map(([p, v]) => h("tr", { class: p === this.me() ? "is-me" : null }, h("th", { scope: "row", text: playerName(p, { ...f.names, ...names }) }), h("td", { class: "total", text: fmt(v) })))),
      ),
    );
  }

  // Who has pressed Play again, and what the table waits for.
  againStatus() {
    const tf = this.table;
    if (!tf || !tf.play_again || !["results", "starting"].includes(tf.status)) return null;
    if (tf.status === "starting") return h("p", { class: "muted", dataset: { testid: "again-status" }, text: t("result.dealing") });
    const humans = tf.seated.filter((s) => !s.computer);
    if (humans.length < 2) return null; // alone with computers: nobody else to wait for
    return h(
      "ul",
      { class: "again-list", "aria-label": t("result.again_who"), dataset: { testid: "again-status" } },
      ...humans.map((s) => h("li", { class: tf.ready.includes(s.player) ? "ready" : null, text: t(tf.ready.includes(s.player) ? "result.again_ready" : "result.again_deciding", { name: s.name }) })),
    );
  }

  async playAgain() {
    await this.request(`/api/tables/${encodeURIComponent(this.tableId)}/again`);
  }

  async quickPlayAgain() {
    try {
      await api("POST", "/api/quickplay", { computers_after_s: 60 });
      announce(t("quick.joined"));
      location.hash = "#/lobby";
    } catch (e) {
      this.setNotice(serverMessage(e.code, e.params, e.message));
      this.render();
    }
  }

  // Leave the seat: before or between hands at once; during a hand the clock plays it until
  // the hand ends (the server's rule), or, untimed, the hand is abandoned.
  async leave() {
    try {
      await api("POST", `/api/tables/${encodeURIComponent(this.tableId)}/leave`, {});
    } catch (e) {
      this.confirmLeave = false;
      this.setNotice(serverMessage(e.code, e.params, e.message));
      this.render();
      return;
    }
    if (this.practice) localStorage.setItem("mp.practice", JSON.stringify({ ...this.practice, finished: true, paused: false }));
    this.confirmLeave = false;
    location.hash = "#/lobby";
  }

  // "Leave" in the table bar while a hand is in play (a winner leaves at once).
  leaveButton() {
    const tf = this.table;
    if (!this.seatedHere() || !["starting", "started"].includes(tf.status)) return null;
    if (this.frame && this.frame.view.phase === "ended" && this.frame.hand_id === this.handId) return null;
    const won = tf.done.includes(this.me());
    return h("button", {
      class: "button secondary",
      type: "button",
      dataset: { action: "leave-hand" },
      text: t("table.leave_hand"),
      onclick: () => {
        if (won) this.leave();
        else {
          this.confirmLeave = true;
          this.render();
        }
      },
    });
  }

  leaveDialog() {
    const tf = this.table;
    const timed = tf && tf.options && tf.options.clock;
    const text = timed ? (tf.rated ? t("leave.timed_rated") : t("leave.timed")) : t("leave.untimed");
    const stay = () => {
      this.confirmLeave = false;
      this.render();
    };
    return h(
      "dialog",
      { class: "overlay", "aria-labelledby": "leave-title", "aria-describedby": "leave-help", dataset: { testid: "confirm-leave" }, oncancel: (e) => { e.preventDefault(); stay(); } },
      h(
        "div",
        { class: "overlay-box" },
        h("h2", { id: "leave-title", text: t("leave.title") }),
        h("p", { id: "leave-help", text }),
        h(
          "div",
          { class: "result-actions" },
          h("button", { class: "button secondary", type: "button", autofocus: true, dataset: { action: "stay" }, onclick: stay, text: t("leave.stay") }),
          h("button", { class: "button primary", type: "button", dataset: { action: "confirm-leave" }, onclick: () => this.leave(), text: t("leave.confirm") }),
        ),
      ),
    );
  }

  keyHelp() {
    const list = h("dl", { class: "key-list" });
    for (const [keys, label] of KEY_HELP) {
      list.append(h("dt", {}, ...keys.split(" ").map((k) => h("kbd", { text: k }))), h("dd", { text: t(label) }));
    }
    const details = h("details", { class: "keys", open: this.helpOpen }, h("summary", { text: t("keys.title") }), list);
    details.addEventListener("toggle", () => (this.helpOpen = details.open));
    return details;
  }

  waiting() {
    const box = h("section", { class: "waiting" });
    const tf = this.table;
    if (!tf) {
      box.append(h("p", { text: t("table.loading") }));
      return box;
    }
    if (tf.status === "closed") return this.goneBox("table_closed");
    const found = tf.status === "starting";
    box.classList.toggle("found", found);
    box.append(h("h2", { dataset: { testid: "table-status" }, text: t(`table.status_${tf.status}`) }));
    if (found && tf.deal_by_ms) box.append(h("p", { class: "muted", dataset: { dealCountdown: tf.deal_by_ms } }));
    if (tf.options) {
      const o = tf.options;
      box.append(
        h("p", {
          class: "options",
          text: [
            tf.quick_play ? t("quick.title") : o.public ? t("options.public") : t("options.private"),
            o.rated ? t("options.rated") : t("options.casual"),
            o.clock ? t(`clock.${o.clock}`) : t("clock.untimed"),
            o.computers ? t("options.computers", { strength: t(`strength.${o.computers}`) }) : t("options.no_computers"),
          ].join(" · "),
        }),
      );
    }
    const seats = h("ol", { class: found ? "seats found-seats" : "seats", dataset: { testid: "seats" } });
    tf.seated.forEach((s) => seats.append(this.seatLine(s, found)));
    for (let i = tf.seated.length; i < 4 && tf.status === "open"; i++) seats.append(h("li", { class: "empty", text: t("table.empty_seat") }));
    box.append(seats);
    const me = session() && session().account ? session().account.id : null;
    if (tf.code) {
      const link = `${location.origin}/#/join/${encodeURIComponent(tf.table_id)}/${encodeURIComponent(tf.code)}`;
      box.append(
        h("div", { class: "invite" },
          h("p", { text: t("table.invite_help") }),
          h("p", {}, h("span", { text: `${t("table.code")}: ` }), h("code", { dataset: { testid: "invite-code" }, text: tf.code })),
          h("input", { class: "invite-link", readonly: true, value: link, "aria-label": t("table.invite_link") })),
      );
    }
    const actions = h("div", { class: "waiting-actions" });
    if (tf.status === "open" && tf.creator === me && tf.options && tf.options.computers) {
      actions.append(h("button", { class: "button", type: "button", dataset: { action: "fill" }, text: t("table.fill"), onclick: () => this.request(`/api/tables/${encodeURIComponent(this.tableId)}/fill`) }));
    }
    if (tf.status === "open") {
      actions.append(h("button", { class: "button secondary", type: "button", dataset: { action: "leave" }, text: t("table.leave"), onclick: async () => { await this.request(`/api/tables/${encodeURIComponent(this.tableId)}/leave`); location.hash = "#/lobby"; } }));
    }
    box.append(actions);
    if (this.notice) box.append(h("p", { class: "notice", dataset: { testid: "notice" }, text: this.notice }));
    return box;
  }

  // A seat of the waiting table; at a table just found, with the rating and whether the
  // player has the table open yet (the deal waits for them, at most until deal_by_ms).
  seatLine(s, found) {
    const name = s.computer ? playerName(s.player, {}) : s.name;
    if (!found) return h("li", { text: name });
    const me = session() && session().account ? session().account.id : null;
    return h(
      "li",
      { class: s.player === me ? "found-seat is-me" : "found-seat" },
      h("span", { class: "found-name", text: s.player === me ? `${name} (${t("seat.you")})` : name }),
      s.rating !== null && s.rating !== undefined && !s.computer ? h("span", { class: "found-rating", text: t("table.rating", { rating: String(Math.round(s.rating)) }) }) : null,
      !s.computer ? h("span", { class: "muted", text: s.present ? t("table.present") : t("table.opening") }) : null,
    );
  }

  async request(path) {
    try {
      await api("POST", path, {});
    } catch (e) {
      this.setNotice(serverMessage(e.code, e.params, e.message));
      this.render();
    }
  }

  actions(view, legal) {
    const bar = h("section", { class: "actions", "aria-label": t("actions.label") });
    const me = view.seat;
    if (me === null) return bar;
    const waiting = this.sentFor === this.key();
    // A button with its key shown (and announced through aria-keyshortcuts).
    const button = (action, text, body, key) =>
      h(
        "button",
        {
          class: `button action action-${action}`,
          type: "button",
          dataset: { action },
          disabled: waiting || !body,
          "aria-keyshortcuts": key,
          onclick: () => body && this.act(body),
        },
        h("span", { class: "label", text }),
        " ",
        h("kbd", { "aria-hidden": "true", text: key }),
      );
    const of = (type) => legal.filter((c) => c.type === type);
    if (of("choose_exchange").length) {
      const choice = this.exchangeChoice();
      bar.append(
        h("span", { class: "hint", text: t("actions.exchange_hint", { n: this.selected.size }) }),
        button("exchange", t("actions.exchange"), choice ? { type: "choose_exchange", tiles: choice.tiles } : null, "E"),
      );
    }
    if (of("declare_missing").length) {
      bar.append(h("span", { class: "hint", text: t("actions.missing_hint") }));
      ["m", "p", "s"].forEach((suit, i) =>
        bar.append(button(`missing-${suit}`, t("actions.missing", { suit: suitLabel(suit) }), { type: "declare_missing", suit }, String(i + 1))),
      );
    }
    if (of("hu").length) bar.append(button("hu", t("actions.hu"), { type: "hu" }, "H"));
    for (const c of of("kong")) bar.append(button("kong", t("actions.kong", { tile: tileLabel(c.tile) }), { type: "kong", tile: c.tile }, "K"));
    if (of("pung").length) bar.append(button("pung", t("actions.pung"), { type: "pung" }, "P"));
    if (of("claim_kong").length) bar.append(button("claim_kong", t("actions.claim_kong"), { type: "claim_kong" }, "K"));
    if (of("pass").length) bar.append(button("pass", t("actions.pass"), { type: "pass" }, "N"));
    if (of("discard").length) bar.append(h("span", { class: "hint", text: t("actions.discard_hint") }));
    if (!legal.length && view.phase !== "ended") bar.append(h("span", { class: "hint", text: phaseText(view, me, this.frame.names) }));
    if (waiting) bar.append(h("span", { class: "hint", text: t("actions.sent") }));
    if (view.phase === "ended" && this.finished && !this.showResult) bar.append(...this.betweenHands());
    return bar;
  }

  log(frame) {
    // Not a live region: it is redrawn with every frame. News goes to the announcer.
    const list = h("ol", { class: "log", tabindex: "0", "aria-labelledby": "log-title" });
    const events = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    const lines = events.map((e) => describe(e, frame)).filter(Boolean).slice(-30);
    lines.forEach((line) => list.append(h("li", { text: line })));
    requestAnimationFrame(() => (list.scrollTop = list.scrollHeight));
    return h("section", { class: "log-box", "aria-labelledby": "log-title" }, h("h2", { id: "log-title", text: t("log.label") }), list);
  }
}

function describe(e, frame) {
  const view = frame.view;
  const name = (seat) => playerName(view.players[seat] ? view.players[seat].player : "", frame.names);
  const me = view.seat;
  switch (e.type) {
    case "hand_started":
      return t("log.hand_started");
    case "tiles_dealt":
      return e.seat === me ? t("log.dealt", { n: e.tiles.length }) : null;
    case "exchange_chosen":
      return e.seat === me ? t("log.you_exchange", { tiles: e.tiles.map(tileLabel).join(", ") }) : null;
    case "exchange_resolved":
      return t("log.exchanged", { direction: t(`direction.${e.direction}`) });
    case "missing_suits_revealed":
      return t("log.missing_revealed", { list: e.suits.map((s, i) => `${name(i)}: ${suitLabel(s)}`).join(", ") });
    case "tile_drawn":
      return e.seat === me ? t("log.you_draw", { tile: tileLabel(e.tile) }) : null;
    case "tile_discarded":
      if (e.seat === me) return t("log.you_discard", { tile: tileLabel(e.tile) });
      return t("log.discard", { name: name(e.seat), tile: tileLabel(e.tile) });
    case "claim_declared":
      return t("log.claim", { name: name(e.seat), claim: t(`claim.${e.claim}`) });
    case "passed":
      return e.seat === me ? t("log.you_pass") : null;
    case "punged":
      return t("log.pung", { name: name(e.seat), tile: tileLabel(e.tile) });
    case "konged":
      return t("log.kong", { name: name(e.seat), tile: tileLabel(e.tile), kind: t(`kong.${e.kind}`) });
    case "won":
      return t("log.won", { name: name(e.seat), value: e.value });
    case "wall_exhausted":
      return t("log.exhausted");
    case "hand_ended":
      return t("log.ended");
    case "hand_paused":
      return t("log.paused");
    case "hand_resumed":
      return t("log.resumed");
    case "hidden":
      return null;
    default:
      return null;
  }
}
