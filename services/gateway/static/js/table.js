// The live table: one WebSocket (protocol v1, docs/gateway.md), the board, the actions the
// seat may take now (from SeatView.legal_actions), countdowns, the event log, the
// settlement, keyboard shortcuts, and practice pause/resume and results.
import { api, session } from "./api.js";
import { clockText, formatSeconds, h, phaseText, playerName, renderBoard } from "./board.js";
import { serverMessage, t } from "./i18n.js";
import { renderSettlement } from "./settlement.js";
import { suitLabel, tileLabel } from "./tiles.js";

const PROTOCOL = 1;
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
    this.finished = null; // {handId, events, names, me}: the last hand that ended
    this.table = null; // the latest table frame
    this.selected = new Set();
    this.sentFor = null;
    this.notice = "";
    this.rtt = 0;
    this.offset = 0;
    this.retry = 0;
    this.pings = new Map();
    const practice = practiceState();
    this.practice = practice && practice.table_id === tableId ? practice : null;
    this.paused = this.practice ? Boolean(this.practice.paused) : false;
    this.showResult = false;
    this.keyHandler = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keyHandler);
    this.ticker = setInterval(() => this.tick(), 200);
    this.pinger = setInterval(() => this.ping(), 5000);
    this.render();
  }

  close() {
    this.closed = true;
    clearInterval(this.ticker);
    clearInterval(this.pinger);
    document.removeEventListener("keydown", this.keyHandler);
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
      this.status = "offline";
      this.renderStatus();
      if (this.closed) return;
      if (e.code === 1008 && ["forbidden", "unauthorized", "unsupported_version"].includes(e.reason)) return;
      this.retry = Math.min(this.retry + 1, 6);
      setTimeout(() => this.connect(), 300 * 2 ** this.retry);
    };
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

  onFrame(f) {
    switch (f.type) {
      case "welcome":
        this.welcome = f;
        this.status = "online";
        this.retry = 0;
        this.offset = f.server_ms - Date.now();
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
        this.frame = f;
        if (f.view.phase === "ended") this.handEnded(f);
        break;
      case "rejected":
        this.sentFor = null;
        this.notice = serverMessage(f.code, f.params, f.reason);
        break;
      case "error":
        this.sentFor = null;
        this.notice = serverMessage(f.code, f.params, f.reason);
        break;
    }
    this.render();
  }

  onEvents(f) {
    if (f.hand_id !== this.handId) {
      this.handId = f.hand_id;
      this.events = new Map();
    }
    for (const e of f.events) this.events.set(e.seq, e);
    const last = f.events[f.events.length - 1];
    if (last && last.type === "hand_ended") this.showResult = true;
  }

  handEnded(frame) {
    const events = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    this.finished = { handId: frame.hand_id, events, names: frame.names, me: frame.view.seat, view: frame.view };
    if (this.practice && frame.view.seat !== null) {
      const seat = frame.view.seat;
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
    if (legal.some((c) => c.type === "choose_exchange")) {
      if (this.selected.has(key)) this.selected.delete(key);
      else if (this.selected.size < 3) this.selected.add(key);
      this.render();
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

  setPaused(paused) {
    this.paused = paused;
    if (this.practice) {
      this.practice = { ...this.practice, paused };
      localStorage.setItem("mp.practice", JSON.stringify(this.practice));
    }
    this.render();
  }

  onKey(e) {
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const legal = this.legal();
    const find = (type) => legal.find((c) => c.type === type);
    const k = e.key.toLowerCase();
    const press = (sel) => {
      const b = this.root.querySelector(sel);
      if (b && !b.disabled) {
        e.preventDefault();
        b.click();
      }
    };
    if (k === "h" && find("hu")) press('[data-action="hu"]');
    else if (k === "p" && find("pung")) press('[data-action="pung"]');
    else if (k === "k") press('[data-action="claim_kong"], [data-action="kong"]');
    else if ((k === "n" || k === "escape") && find("pass")) press('[data-action="pass"]');
    else if (k === "e") press('[data-action="exchange"]');
    else if (["1", "2", "3"].includes(k) && find("declare_missing")) press(`[data-action="missing-${"mps"[Number(k) - 1]}"]`);
    else if (k === "arrowleft" || k === "arrowright") {
      const tiles = [...this.root.querySelectorAll(".my-hand button.tile")];
      if (!tiles.length) return;
      const at = tiles.indexOf(document.activeElement);
      const next = at < 0 ? 0 : (at + (k === "arrowright" ? 1 : -1) + tiles.length) % tiles.length;
      tiles[next].focus();
      e.preventDefault();
    } else if (k === " " && this.showResult) press('[data-action="dismiss"]');
  }

  // --- drawing -----------------------------------------------------------------------------

  renderStatus() {
    const s = this.root.querySelector(".connection");
    if (s) {
      s.textContent = t(`connection.${this.status || "connecting"}`);
      s.className = `connection ${this.status}`;
    }
  }

  tick() {
    if (!this.frame) return;
    const view = this.frame.view;
    this.root.querySelectorAll("[data-clock-seat]").forEach((node) => {
      const c = clockText(view, Number(node.dataset.clockSeat), this.serverNow(), this.rtt / 2);
      if (c) {
        node.textContent = c.text;
        node.classList.toggle("urgent", c.urgent);
      }
    });
    const cd = this.root.querySelector("[data-countdown]");
    if (cd && view.seat !== null) {
      const c = clockText(view, view.seat, this.serverNow(), this.rtt / 2);
      if (c && c.running) cd.textContent = formatSeconds(c.remaining);
    }
  }

  render() {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key || document.activeElement.dataset.action : null;
    const root = this.root;
    root.replaceChildren();
    const top = h(
      "div",
      { class: "table-bar" },
      h("a", { href: "#/lobby", class: "button secondary", text: t("table.to_lobby") }),
      h("span", { class: "table-id", text: t("table.id", { id: this.tableId }) }),
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
      h("span", { class: "connection", role: "status" }),
    );
    root.append(top);
    this.renderStatus();
    if (!this.frame) {
      root.append(this.waiting());
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
    });
    root.append(board);
    root.append(this.actions(view, legal));
    if (this.notice) root.append(h("p", { class: "notice", role: "alert", text: this.notice }));
    const side = h("div", { class: "side" });
    side.append(this.log(frame));
    if (this.finished) {
      side.append(renderSettlement(this.finished.events, this.finished.names, this.finished.me));
    }
    root.append(side);
    if (this.paused) {
      root.append(
        h(
          "div",
          { class: "overlay", role: "dialog", "aria-modal": "true", "aria-label": t("practice.paused") },
          h("div", { class: "overlay-box" }, h("h2", { text: t("practice.paused") }), h("p", { text: t("practice.paused_help") }),
            h("button", { class: "button", type: "button", dataset: { action: "resume" }, onclick: () => this.setPaused(false), text: t("practice.resume") })),
        ),
      );
    } else if (this.showResult && this.finished) {
      root.append(this.resultDialog());
    }
    if (focused) {
      const again = root.querySelector(`[data-key="${focused}"], [data-action="${focused}"]`);
      if (again) again.focus();
    }
    this.tick();
  }

  resultDialog() {
    const f = this.finished;
    const me = f.me;
    const view = f.view;
    const score = me !== null ? view.players[me].score : null;
    const box = h(
      "div",
      { class: "overlay-box result" },
      h("h2", { text: t("result.title") }),
      me !== null ? h("p", { class: "result-score", dataset: { testid: "result-score" }, text: t("result.score", { score: score > 0 ? `+${score}` : score }) }) : null,
      renderSettlement(f.events, f.names, me),
      h(
        "div",
        { class: "result-actions" },
        h("button", { class: "button", type: "button", dataset: { action: "dismiss" }, onclick: () => { this.showResult = false; this.render(); }, text: t("result.close") }),
        this.practice ? h("a", { class: "button secondary", href: "#/lobby", text: t("table.to_lobby") }) : null,
        h("a", { class: "button secondary", href: `#/replay/${encodeURIComponent(f.handId)}`, text: t("result.replay") }),
      ),
    );
    return h("div", { class: "overlay", role: "dialog", "aria-modal": "true", "aria-label": t("result.title") }, box);
  }

  waiting() {
    const box = h("section", { class: "waiting" });
    const tf = this.table;
    if (!tf) {
      box.append(h("p", { text: t("table.loading") }));
      return box;
    }
    box.append(h("h2", { text: t(`table.status_${tf.status}`) }));
    if (tf.options) {
      const o = tf.options;
      box.append(
        h("p", {
          class: "options",
          text: [
            o.public ? t("options.public") : t("options.private"),
            o.rated ? t("options.rated") : t("options.casual"),
            o.clock ? t(`clock.${o.clock}`) : t("clock.untimed"),
            o.computers ? t("options.computers", { strength: t(`strength.${o.computers}`) }) : t("options.no_computers"),
          ].join(" · "),
        }),
      );
    }
    const seats = h("ol", { class: "seats" });
    tf.seated.forEach((s) => seats.append(h("li", { text: s.computer ? playerName(s.player, {}) : s.name })));
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
    if (this.notice) box.append(h("p", { class: "notice", role: "alert", text: this.notice }));
    return box;
  }

  async request(path) {
    try {
      await api("POST", path, {});
    } catch (e) {
      this.notice = serverMessage(e.code, e.params, e.message);
      this.render();
    }
  }

  actions(view, legal) {
    const bar = h("section", { class: "actions", "aria-label": t("actions.label") });
    const me = view.seat;
    if (me === null) return bar;
    const waiting = this.sentFor === this.key();
    const button = (action, text, body, hint) =>
      h("button", {
        class: `button action action-${action}`,
        type: "button",
        dataset: { action },
        disabled: waiting || !body,
        "aria-keyshortcuts": hint || undefined,
        title: hint ? t("actions.key", { key: hint }) : undefined,
        onclick: () => body && this.act(body),
        text,
      });
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
    return bar;
  }

  log(frame) {
    const list = h("ol", { class: "log", "aria-label": t("log.label"), "aria-live": "polite" });
    const events = [...this.events.values()].sort((a, b) => a.seq - b.seq);
    const lines = events.map((e) => describe(e, frame)).filter(Boolean).slice(-30);
    lines.forEach((line) => list.append(h("li", { text: line })));
    requestAnimationFrame(() => (list.scrollTop = list.scrollHeight));
    return h("section", { class: "log-box" }, h("h3", { text: t("log.label") }), list);
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
    case "hidden":
      return null;
    default:
      return null;
  }
}
