// The live table: its state (table-state.js: one object, one pure update per frame), the
// socket (socket.js), the keyboard (keyboard.js), storage (storage.js), and the view of the
// state drawn in place (dom.js morph): the board, the actions the seat may take now (from
// SeatView.legal_actions), countdowns, the log panel, the settlement, screen-reader
// announcements, and practice pause/resume and results.
import { announce, clearAnnouncements } from "./a11y.js";
import { api, session } from "./api.js";
import { clockText, formatSeconds, h, phaseText, playerName, renderBoard, updateClock } from "./board.js";
import { morph } from "./dom.js";
import { serverMessage, t } from "./i18n.js";
import { KEY_HELP, tableKey } from "./keyboard.js";
import { renderSettlement } from "./settlement.js";
import { muted, play, setMuted } from "./sound.js";
import { TableSocket } from "./socket.js";
import { practiceResults, practiceState, prefs, savePractice, saveResult, setPref } from "./storage.js";
import { STOPPED, decisionKey, initialState, lastSeq, legalActions, update, waitsShown } from "./table-state.js";
import { suitLabel, tileElement, tileLabel } from "./tiles.js";

export { practiceResults, practiceState };

const TIME_LOW_MS = 5000;
// Of the close reasons that stop the client, the ones that need a fresh page (a new session,
// or the new client).
const RELOAD = ["unauthorized", "unsupported_version", "session_ended", "session_expired"];
// The log panel is open by default where the table has room beside it.
const WIDE = 1200;
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

// The newest discard still in its river (claimed tiles leave it): {seat} or null.
export function lastDiscardOf(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === "tile_discarded") return { seat: e.seat };
    if (e.type === "punged" || (e.type === "konged" && e.kind === "exposed")) return null;
    if (e.type === "won" && !e.self_drawn && !(e.patterns || []).includes("robbing_kong")) return null;
  }
  return null;
}

class TableClient {
  constructor(root, tableId) {
    this.root = root;
    this.tableId = tableId;
    const logOpen = prefs().logOpen ?? window.innerWidth >= WIDE;
    this.state = initialState({ tableId, practice: practiceState(), logOpen, waitsHelp: prefs().waitsHelp ?? true });
    this.told = { decision: null, timeLow: null, status: "connecting", ended: null };
    this.handFocused = false; // focus went to the hand once, on opening the table
    this.callouts = new Map(); // seat → {text, until}: 碰 / 杠 / 胡 shown at the calling seat
    this.socket = new TableSocket(tableId, {
      resume: () => {
        const last = lastSeq(this.state);
        return this.state.handId && last > 0 ? { hand_id: this.state.handId, last_seq: last } : null;
      },
      onFrame: (f) => this.dispatch(f),
      onClose: (e) => {
        this.dispatch({ type: "ui:closed", code: e.code, reason: e.reason });
        return !this.state.stopped;
      },
      onConnecting: () => this.dispatch({ type: "ui:connecting" }),
    });
    this.keyHandler = (e) =>
      tableKey(e, {
        root: this.root,
        legal: () => this.legal(),
        handTiles: () => this.handTiles(),
        focusHand: () => this.focusHand(),
        toggleHelp: () => {
          this.dispatch({ type: "ui:help" });
          const help = this.root.querySelector(".keys summary");
          if (help && this.state.helpOpen) help.focus();
        },
        toggleLog: () => this.toggleLog(),
      });
    document.addEventListener("keydown", this.keyHandler);
    this.focusHandler = (e) => {
      const key = e.target && e.target.dataset ? e.target.dataset.key : null;
      if (key && e.target.closest(".my-hand") && this.root.contains(e.target)) {
        this.rove(e.target);
        // The waits help follows the focused tile (as it follows the pointer).
        this.hint(e.target.dataset.tile || null);
      }
    };
    this.root.addEventListener("focusin", this.focusHandler);
    this.ticker = setInterval(() => this.tick(), 200);
    clearAnnouncements();
    this.render();
  }

  connect() {
    this.socket.connect();
  }

  close() {
    clearInterval(this.ticker);
    clearTimeout(this.calloutTimer);
    document.removeEventListener("keydown", this.keyHandler);
    this.root.removeEventListener("focusin", this.focusHandler);
    this.socket.close();
  }

  // Every frame, the server's and the page's own, goes through update(); then what the new
  // state implies is done (storage, announcements) and the page follows it.
  dispatch(f) {
    const before = this.state;
    const s = update(before, f);
    this.state = s;
    if (f.type === "pong") return; // nothing shown changes
    if (s.practice && s.practice !== before.practice) savePractice(s.practice);
    if (s.notice && s.notice !== before.notice) announce(this.noticeText(s.notice), { assertive: true });
    if (s.frame) for (const e of s.news) announce(describe(e, s.frame));
    for (const e of s.news) this.feel(e);
    if (before.paused && !s.paused) this.told.decision = null; // say again what the seat is asked
    if (s.finished && s.finished !== before.finished) this.handEnded(s.finished);
    if (s.logOpen !== before.logOpen) setPref("logOpen", s.logOpen);
    if (s.waitsHelp !== before.waitsHelp) setPref("waitsHelp", s.waitsHelp);
    this.render();
    if (s.stopped && !before.stopped && s.stopped !== "opened_elsewhere") {
      const back = this.root.querySelector('[data-action="to-lobby"]');
      if (back) back.focus();
    }
    if (f.type === "view" || f.type === "change") this.tellDecision();
  }

  // What an event sounds and looks like: a click for a discard, the call-out at the calling
  // seat for about 1.5 s (碰 pung, 杠 kong, 胡 win) with its sound.
  feel(e) {
    const call = { punged: "碰", konged: "杠", won: "胡" }[e.type];
    if (e.type === "tile_discarded") play("discard");
    if (!call) return;
    play(e.type === "won" ? "win" : "claim");
    this.callouts.set(e.seat, { text: call, until: Date.now() + 1500 });
    clearTimeout(this.calloutTimer);
    this.calloutTimer = setTimeout(() => this.render(), 1600);
  }

  activeCallouts() {
    const now = Date.now();
    const out = {};
    for (const [seat, c] of this.callouts) if (c.until > now) out[seat] = c.text;
    return out;
  }

  toggleMute() {
    setMuted(!muted());
    this.render();
  }

  noticeText(n) {
    if (!n) return "";
    return n.text !== undefined ? n.text : serverMessage(n.code, n.params);
  }

  setNotice(text) {
    this.dispatch({ type: "ui:notice", notice: text ? { text } : null });
  }

  // "Use here": open the table again, which moves the seat back to this tab.
  useHere() {
    this.dispatch({ type: "ui:use-here" });
    this.socket.reconnect();
  }

  toggleLog() {
    this.dispatch({ type: "ui:log" });
  }

  serverNow() {
    return Date.now() + this.state.offset;
  }

  send(frame) {
    this.socket.send(frame);
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
    play("turn");
    announce(buttons.length ? t("announce.decision_keys", { what, keys: buttons.join(", ") }) : what);
  }

  handEnded(finished) {
    const seat = finished.me;
    const view = finished.view;
    if (seat !== null && this.told.ended !== finished.handId) {
      this.told.ended = finished.handId;
      const score = view.players[seat].score;
      announce(t("announce.ended", { score: score > 0 ? `+${score}` : String(score) }));
    }
    if (this.practice && seat !== null) {
      const ended = finished.events.find((e) => e.type === "hand_ended");
      saveResult({
        hand_id: finished.handId,
        table_id: this.tableId,
        at: Date.now(),
        score: view.players[seat].score,
        placement: ended ? ended.placements[seat] : null,
        end: view.end,
        strength: this.practice.strength,
        pace: this.practice.pace,
      });
    }
  }

  // --- acting ------------------------------------------------------------------------------

  legal() {
    return legalActions(this.state);
  }

  key() {
    return decisionKey(this.state);
  }

  act(body) {
    if (!this.frame || this.state.sentFor === this.key()) return;
    const frame = this.frame;
    this.dispatch({ type: "ui:sent" });
    const id = `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    this.send({ type: "command", command_id: id, decision_seq: frame.decision_seq, hand_id: frame.hand_id, body });
  }

  onTile(tile, key) {
    const legal = this.legal();
    if (legal.some((c) => c.type === "choose_exchange")) {
      this.dispatch({ type: "ui:select", key });
      announce(t("actions.exchange_hint", { n: this.state.selected.length }));
      return;
    }
    this.state = update(this.state, { type: "ui:focus", key });
    if (legal.some((c) => c.type === "discard" && c.tile === tile)) this.act({ type: "discard", tile });
  }

  selectedTiles() {
    return this.state.selected.map((k) => {
      const node = this.root.querySelector(`.my-hand [data-key="${k}"]`);
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

  // The waits help follows the pointer; when the pointer leaves, the focused hand tile.
  hint(tile) {
    const active = document.activeElement;
    const focused = active && active.closest && active.closest(".my-hand") ? active.dataset.tile || null : null;
    const next = tile || focused;
    if (next !== this.state.hintTile) this.dispatch({ type: "ui:hint", tile: next });
  }

  // --- keyboard ----------------------------------------------------------------------------

  handTiles() {
    return [...this.root.querySelectorAll(".my-hand button.tile")];
  }

  // The roving tab stop of the hand follows focus.
  rove(node) {
    this.state = update(this.state, { type: "ui:focus", key: node.dataset.key });
    for (const n of this.handTiles()) n.tabIndex = n === node ? 0 : -1;
  }

  focusHand() {
    const tiles = this.handTiles();
    const stop = tiles.find((n) => n.tabIndex === 0) || tiles[0];
    if (stop) stop.focus();
    return Boolean(stop);
  }

  // --- drawing -----------------------------------------------------------------------------

  renderStatus() {
    const status = this.state.status;
    const s = this.root.querySelector(".connection");
    if (s) {
      s.textContent = t(`connection.${status || "connecting"}`);
      s.className = `connection ${status}`;
    }
    if (status !== this.told.status) {
      // Only changes worth hearing: losing the connection, and getting it back.
      if (status === "offline" || (status === "online" && this.told.status === "offline")) {
        announce(t(`connection.${status}`));
      }
      this.told.status = status;
    }
  }

  tick() {
    const deal = this.root.querySelector("[data-deal-countdown]");
    if (deal) deal.textContent = t("table.deal_in", { s: Math.max(0, Math.ceil((Number(deal.dataset.dealCountdown) - this.serverNow()) / 1000)) });
    if (!this.frame) return;
    const view = this.frame.view;
    const lag = this.state.rtt / 2;
    this.root.querySelectorAll("[data-clock-seat]").forEach((node) => {
      const c = clockText(view, Number(node.dataset.clockSeat), this.serverNow(), lag);
      if (c) updateClock(node, c);
    });
    if (view.seat === null) return;
    const mine = clockText(view, view.seat, this.serverNow(), lag);
    const cd = this.root.querySelector("[data-countdown]");
    if (cd && mine && mine.running) cd.textContent = formatSeconds(mine.remaining);
    // A screen reader hears once per decision that time is running out.
    if (mine && mine.running && mine.remaining < TIME_LOW_MS && this.legal().length && this.told.timeLow !== this.key()) {
      this.told.timeLow = this.key();
      announce(t("announce.time_low", { s: Math.max(0, Math.ceil(mine.remaining / 1000)) }), { assertive: true });
      play("low");
    }
  }

  bar() {
    const s = this.state;
    return h(
      "div",
      { class: "table-bar", dataset: { part: "bar" } },
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
      this.frame
        ? h(
            "button",
            {
              class: "button secondary log-toggle",
              type: "button",
              dataset: { action: "toggle-log" },
              "aria-expanded": s.logOpen ? "true" : "false",
              "aria-controls": "side",
              "aria-keyshortcuts": "L",
              onclick: () => this.toggleLog(),
            },
            h("span", { class: "label", text: t("log.toggle") }),
          )
        : null,
      this.frame
        ? h(
            "button",
            { class: "button secondary", type: "button", dataset: { action: "mute" }, "aria-pressed": muted() ? "true" : "false", onclick: () => this.toggleMute() },
            h("span", { "aria-hidden": "true", text: "♪ " }),
            h("span", { class: "label", text: t("sound.mute") }),
          )
        : null,
      this.frame && this.frame.view.seat !== null
        ? h(
            "button",
            {
              class: "button secondary",
              type: "button",
              dataset: { action: "waits-help", testid: "waits-toggle" },
              "aria-pressed": s.waitsHelp ? "true" : "false",
              onclick: () => this.dispatch({ type: "ui:waits" }),
            },
            h("span", { "aria-hidden": "true", lang: "zh", text: "听 " }),
            h("span", { class: "label", text: t("waits.toggle") }),
          )
        : null,
      h("span", { class: "connection", dataset: { part: "connection" } }),
    );
  }

  // The waits help (听牌提示): the engine's figures from this seat's own view (SeatView.waits),
  // shown near the hand: each wait with its unseen copies and what a win on it is worth, or,
  // while choosing a discard, what the hovered or focused tile's discard would wait on.
  waitsPanel() {
    const shown = waitsShown(this.state);
    if (!shown) return null;
    const box = h("section", { class: "waits-help", "aria-label": t("waits.label"), dataset: { part: "waits", testid: "waits", mode: shown.mode } });
    const title = (text) => h("span", { class: "waits-title", dataset: { testid: "waits-title" }, text });
    const list = (waits) =>
      h(
        "ul",
        { class: "waits-list" },
        waits.map((w) =>
          h(
            "li",
            { class: "wait", dataset: { testid: "wait", wait: w.tile, unseen: String(w.unseen), self: String(w.self_drawn), discard: String(w.discard) } },
            tileElement(w.tile, { decorative: true, small: true }),
            h("span", { class: "wait-left", "aria-hidden": "true", text: `×${w.unseen}` }),
            h("span", { class: "wait-value", "aria-hidden": "true", text: t("waits.values", { self: w.self_drawn, discard: w.discard }) }),
            h("span", { class: "sr-only", text: t("waits.item", { tile: tileLabel(w.tile), n: w.unseen, self: w.self_drawn, discard: w.discard }) }),
          ),
        ),
      );
    if (shown.mode === "ready") box.append(title(t("waits.ready")), list(shown.waits));
    else if (shown.mode === "far") box.append(title(t("waits.far", { n: shown.shanten })));
    else if (shown.hint && shown.hint.shanten === 0) box.append(title(t("waits.after", { tile: tileLabel(shown.hint.tile) })), list(shown.hint.waits));
    else if (shown.hint) box.append(title(t("waits.after_far", { tile: tileLabel(shown.hint.tile), n: shown.hint.shanten })));
    else if (shown.keep.length) box.append(title(t("waits.keep", { n: shown.keep.length })));
    else box.append(title(t("waits.best", { n: shown.best })));
    return box;
  }

  render() {
    const s = this.state;
    const active = document.activeElement;
    const hadFocus = !active || active === document.body || this.root.contains(active);
    const focusedKey = active && active.dataset ? active.dataset.key : null;
    const focusedAction = active && active.dataset ? active.dataset.action : null;
    const focusedIndex = hadFocus && !focusedKey && !focusedAction ? this.focusables().indexOf(active) : -1;
    const root = this.root;
    const parts = [this.bar()];
    let dialog = null;
    if (s.stopped && s.stopped !== "opened_elsewhere") {
      parts.push(this.goneBox(s.stopped));
    } else if (!this.frame) {
      parts.push(this.waiting());
      if (s.stopped) dialog = this.elsewhereDialog();
    } else {
      parts.push(this.layout());
      if (s.stopped) dialog = this.elsewhereDialog();
      else if (s.confirmLeave) dialog = this.leaveDialog();
      else if (this.paused) dialog = this.pausedDialog();
      else if (s.showResult && this.finished) dialog = this.resultDialog();
    }
    if (dialog) parts.push(dialog);
    morph(root, parts);
    this.renderStatus();
    // A dialog drawn for the first time opens as a modal dialog: focus moves in (its
    // autofocus button), the page behind is inert.
    for (const d of root.querySelectorAll("dialog")) {
      if (!d.open) {
        d.showModal();
        const again = focusedAction && d.querySelector(`[data-action="${focusedAction}"]`);
        if (again) again.focus();
      }
    }
    const now = document.activeElement;
    const lost = !now || now === document.body || !root.contains(now);
    if (!dialog && hadFocus && lost) this.restoreFocus(focusedKey, focusedAction, focusedIndex, active);
    this.tick();
  }

  // The table and, beside it, the log panel.
  layout() {
    const s = this.state;
    const frame = this.frame;
    const view = frame.view;
    const me = view.seat;
    const legal = this.legal();
    const wrap = h("div", { class: "board-wrap", dataset: { part: "board-wrap" } });
    renderBoard(wrap, view, {
      me,
      names: frame.names,
      legal,
      onTile: me !== null && !this.paused ? (tile, key) => this.onTile(tile, key) : null,
      selected: s.selected,
      serverNow: this.serverNow(),
      lag: s.rtt / 2,
      focusKey: s.focusKey,
      lastDiscard: lastDiscardOf(s.events),
      callouts: this.activeCallouts(),
      keepsReady: (() => {
        const shown = waitsShown(s);
        return shown && shown.mode === "discard" ? shown.keep : [];
      })(),
      onHint: me !== null ? (tile) => this.hint(tile) : null,
    });
    wrap.append(this.actions(view, legal));
    const notice = s.notice ? h("p", { class: "notice", dataset: { testid: "notice", part: "notice" }, text: this.noticeText(s.notice) }) : null;
    const side = h(
      "aside",
      { class: "side", id: "side", "aria-label": t("log.panel"), hidden: !s.logOpen },
      h("button", { class: "button secondary close-log", type: "button", dataset: { action: "close-log" }, onclick: () => this.dispatch({ type: "ui:log", open: false }), text: t("log.close") }),
      this.log(frame),
      me !== null ? this.keyHelp() : null,
      this.finished ? renderSettlement(this.finished.events, this.finished.names, this.finished.me, { id: "settlement", view: this.finished.view }) : null,
    );
    return h("div", { class: `table-layout ${s.logOpen ? "log-open" : "log-closed"}`, dataset: { part: "layout" } }, h("div", { class: "table-main", dataset: { part: "main" } }, wrap, notice), side);
  }

  // After a redraw that lost the focus (its node went away): the same hand tile or button,
  // else the hand's tab stop or the first action (so a keyboard player never loses the
  // table). On opening the table, focus goes to the hand once it is dealt.
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
      { class: "overlay", id: "dialog-elsewhere", "aria-labelledby": "elsewhere-title", "aria-describedby": "elsewhere-help", dataset: { testid: "opened-elsewhere" }, oncancel: (e) => e.preventDefault() },
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
      { class: "overlay", id: "dialog-paused", "aria-labelledby": "paused-title", oncancel: (e) => e.preventDefault() },
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
    this.dispatch({ type: "ui:result", show: false });
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
      renderSettlement(f.events, f.names, me, { view: f.view }),
      h("div", { class: "result-actions" }, ...this.resultActions(f)),
    );
    return h(
      "dialog",
      {
        class: "overlay",
        id: "dialog-result",
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
    const out = [h("button", { class: "button", type: "button", dataset: { action: "show-result" }, onclick: () => this.dispatch({ type: "ui:result", show: true }), text: t("result.show") })];
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
    }
  }

  // Leave the seat: before or between hands at once; during a hand the clock plays it until
  // the hand ends (the server's rule), or, untimed, the hand is abandoned.
  async leave() {
    try {
      await api("POST", `/api/tables/${encodeURIComponent(this.tableId)}/leave`, {});
    } catch (e) {
      this.dispatch({ type: "ui:confirm-leave", open: false });
      this.setNotice(serverMessage(e.code, e.params, e.message));
      return;
    }
    this.dispatch({ type: "ui:left" });
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
        else this.dispatch({ type: "ui:confirm-leave", open: true });
      },
    });
  }

  leaveDialog() {
    const tf = this.table;
    const timed = tf && tf.options && tf.options.clock;
    const text = timed ? (tf.rated ? t("leave.timed_rated") : t("leave.timed")) : t("leave.untimed");
    const stay = () => this.dispatch({ type: "ui:confirm-leave", open: false });
    return h(
      "dialog",
      { class: "overlay", id: "dialog-leave", "aria-labelledby": "leave-title", "aria-describedby": "leave-help", dataset: { testid: "confirm-leave" }, oncancel: (e) => { e.preventDefault(); stay(); } },
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
    return h(
      "details",
      {
        class: "keys",
        open: this.state.helpOpen,
        ontoggle: (e) => {
          if (e.target.open !== this.state.helpOpen) this.state = update(this.state, { type: "ui:help", open: e.target.open });
        },
      },
      h("summary", { text: t("keys.title") }),
      list,
    );
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
    if (this.state.notice) box.append(h("p", { class: "notice", dataset: { testid: "notice" }, text: this.noticeText(this.state.notice) }));
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
    }
  }

  actions(view, legal) {
    const bar = h("section", { class: "actions", "aria-label": t("actions.label"), dataset: { part: "actions" } });
    const me = view.seat;
    if (me === null) {
      bar.append(h("span", { class: "phase", dataset: { testid: "phase" }, text: phaseText(view, me, this.frame.names) }));
      return bar;
    }
    const waiting = this.state.sentFor === this.key();
    // The waits help sits in the action bar, right under the hand (no height of its own).
    const waits = this.waitsPanel();
    if (waits) bar.append(waits);
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
        h("span", { class: "hint", text: t("actions.exchange_hint", { n: this.state.selected.length }) }),
        button("exchange", t("actions.exchange"), choice ? { type: "choose_exchange", tiles: choice.tiles } : null, "E"),
      );
    }
    if (of("declare_missing").length) {
      ["m", "p", "s"].forEach((suit, i) =>
        bar.append(button(`missing-${suit}`, t("actions.missing", { suit: suitLabel(suit) }), { type: "declare_missing", suit }, String(i + 1))),
      );
    }
    if (of("hu").length) bar.append(button("hu", t("actions.hu"), { type: "hu" }, "H"));
    for (const c of of("kong")) bar.append(button("kong", t("actions.kong", { tile: tileLabel(c.tile) }), { type: "kong", tile: c.tile }, "K"));
    if (of("pung").length) bar.append(button("pung", t("actions.pung"), { type: "pung" }, "P"));
    if (of("claim_kong").length) bar.append(button("claim_kong", t("actions.claim_kong"), { type: "claim_kong" }, "K"));
    if (of("pass").length) bar.append(button("pass", t("actions.pass"), { type: "pass" }, "N"));
    if (waiting) bar.append(h("span", { class: "hint", text: t("actions.sent") }));
    if (view.phase === "ended" && this.finished && !this.state.showResult) bar.append(...this.betweenHands());
    return bar;
  }

  log(frame) {
    // Not a live region: news goes to the announcer.
    const list = h("ol", { class: "log", tabindex: "0", "aria-labelledby": "log-title", dataset: { part: "log" } });
    const lines = this.state.events.map((e) => describe(e, frame)).filter(Boolean).slice(-60);
    lines.forEach((line) => list.append(h("li", { text: line })));
    requestAnimationFrame(() => {
      const shown = this.root.querySelector(".log");
      if (shown) shown.scrollTop = shown.scrollHeight;
    });
    return h("section", { class: "log-box", "aria-labelledby": "log-title" }, h("h2", { id: "log-title", text: t("log.label") }), list);
  }
}

// The state's parts the view reads most, read through to the one state object.
for (const part of ["frame", "table", "welcome", "finished", "handId", "practice", "paused"]) {
  Object.defineProperty(TableClient.prototype, part, {
    get() {
      return this.state[part];
    },
  });
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
