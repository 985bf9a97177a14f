// The live table's state and its one pure `update(state, frame)`: no DOM, no storage, no
// clock. Frames from the server (welcome, pong, table, events, view, rejected, error) and the
// player's own doings ("ui:…" frames, sent by the page) go through it; the page then draws
// the state (table.js) and does what it implies (announcements, storage).
//
// Frames that need the time carry it: the socket stamps `now` (Date.now()) on every frame and
// `perf` (performance.now()) on pongs.

// Close reasons after which the client stops (docs/gateway.md) and shows why, with a way on.
export const STOPPED = ["forbidden", "table_closed", "opened_elsewhere", "unauthorized", "unsupported_version", "session_ended", "session_expired"];

export function initialState({ tableId, practice = null, logOpen = true, waitsHelp = true } = {}) {
  return {
    tableId,
    status: "connecting", // connecting, online, offline, stopped
    welcome: null,
    table: null, // the latest table frame
    frame: null, // the latest view frame
    handId: null,
    events: [], // the hand's events so far, by seq
    eventsLoaded: false, // the backlog has arrived: later events are news
    news: [], // events new with the last frame (for announcements and animations)
    finished: null, // {handId, events, names, me, view}: the last hand that ended
    selected: [], // keys of the hand tiles chosen for the exchange
    sentFor: null, // the decision a command was sent for (buttons wait)
    notice: null, // {code, params} or {text}
    closeNotice: false, // the notice came from a close: cleared once back
    rtt: 0,
    offset: 0, // server clock − client clock
    focusKey: null, // the hand tile holding the tab stop
    helpOpen: false,
    logOpen,
    waitsHelp, // the waits help (听牌提示) is shown: on unless the player turned it off
    hintTile: null, // the hand tile hovered or focused: its discard's waits are shown
    paused: false,
    showResult: false,
    stopped: null,
    confirmLeave: false,
    practice: practice && practice.table_id === tableId ? practice : null,
  };
}

// What the waits help shows now, from the seat's view (the engine's figures, RULES.md §4):
//   {mode: "ready", waits}              13 tiles, ready: each wait with its unseen copies
//   {mode: "far", shanten}              13 tiles, not ready: tile changes from ready
//   {mode: "discard", keep, best, hint} 14 tiles: the tiles whose discard keeps the hand
//                                       ready, the closest distance, the hovered one's hint
// or null (switched off, a spectator, nothing to show).
export function waitsShown(state) {
  if (!state.waitsHelp || !state.frame) return null;
  const help = state.frame.view.waits;
  if (!help) return null;
  const discards = help.discards || [];
  if (discards.length) {
    const keep = discards.filter((d) => d.shanten === 0).map((d) => d.tile);
    const best = Math.min(...discards.map((d) => d.shanten));
    const hint = discards.find((d) => d.tile === state.hintTile) || null;
    return { mode: "discard", keep, best, hint, payers: help.payers };
  }
  if (help.shanten === 0) return { mode: "ready", waits: help.waits || [], payers: help.payers };
  if (help.shanten !== null && help.shanten !== undefined) return { mode: "far", shanten: help.shanten };
  return null;
}

// The pending decision's key: a command sent for it makes the buttons wait.
export function decisionKey(state) {
  const f = state.frame;
  return f ? `${f.hand_id}/${f.decision_seq}/${f.seq}` : "";
}

// What the seat may do now (nothing while paused).
export function legalActions(state) {
  if (!state.frame || state.paused) return [];
  return state.frame.view.legal_actions || [];
}

export function lastSeq(state) {
  let n = 0;
  const have = new Set(state.events.map((e) => e.seq));
  while (have.has(n + 1)) n++;
  return n;
}

function onEvents(state, f) {
  let s = state;
  if (f.hand_id !== s.handId) {
    // A new hand is dealt only once every human asked for it: the last result goes.
    if (s.handId !== null) {
      s = { ...s, showResult: false, confirmLeave: false };
      if (s.practice && s.practice.finished) s.practice = { ...s.practice, finished: false };
    }
    s = { ...s, handId: f.hand_id, events: [], eventsLoaded: false };
  }
  const bySeq = new Map(s.events.map((e) => [e.seq, e]));
  const news = [];
  for (const e of f.events) {
    if (s.eventsLoaded && !bySeq.has(e.seq)) news.push(e);
    bySeq.set(e.seq, e);
  }
  const events = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const last = f.events[f.events.length - 1];
  return { ...s, events, eventsLoaded: true, news, showResult: s.showResult || Boolean(last && last.type === "hand_ended") };
}

function onView(state, f) {
  const before = state.frame;
  const s = { ...state };
  const sameDecision = before && before.hand_id === f.hand_id && before.decision_seq === f.decision_seq;
  if (before && !sameDecision) s.selected = [];
  if (!sameDecision) s.sentFor = null;
  if (before && before.hand_id !== f.hand_id) s.focusKey = s.hintTile = null;
  s.frame = f;
  s.paused = Boolean(f.view.paused);
  if (f.view.phase === "ended" && !(s.finished && s.finished.handId === f.hand_id && s.finished.events.length === s.events.length)) {
    s.finished = { handId: f.hand_id, events: s.events, names: f.names, me: f.view.seat, view: f.view };
    if (s.practice && f.view.seat !== null) s.practice = { ...s.practice, finished: true, paused: false };
  }
  return s;
}

// A `change` frame (the hello's `compact`, docs/protocol.md): the new events, then the view
// with the fields it names replaced, and in each player entry it names the fields given (or
// whole, when `full`), exactly as an `events` frame and a `view` frame would have left the
// state. `names` comes only when it changed.
export function changedView(base, f) {
  const view = { ...base, ...f.view };
  const players = f.players || {};
  if (Object.keys(players).length) view.players = view.players.map((p, i) => (players[i] ? { ...p, ...players[i] } : p));
  return view;
}

function onChange(state, f) {
  const s = f.events && f.events.length ? onEvents(state, { hand_id: f.hand_id, events: f.events }) : state;
  const before = s.frame;
  const base = !f.full && before && before.hand_id === f.hand_id ? before.view : null;
  if (!f.full && !base) return s; // nothing to apply the change to (never sent so on one socket)
  const names = f.names && Object.keys(f.names).length ? f.names : before ? before.names : {};
  const view = base ? changedView(base, f) : f.view;
  return onView(s, { type: "view", seq: f.seq, hand_id: f.hand_id, decision_seq: f.decision_seq, view, names, server_ms: f.server_ms, now: f.now });
}

// The next state after `frame`. Never changes `state`.
export function update(state, frame) {
  const s = { ...state, news: [] };
  switch (frame.type) {
    case "welcome":
      return {
        ...s,
        welcome: frame,
        status: "online",
        offset: frame.now !== undefined ? frame.server_ms - frame.now : s.offset,
        notice: s.closeNotice ? null : s.notice,
        closeNotice: false,
      };
    case "pong": {
      if (frame.perf === undefined || frame.now === undefined) return s;
      const rtt = frame.perf - frame.t;
      return { ...s, rtt, offset: frame.server_ms + rtt / 2 - frame.now };
    }
    case "table":
      return { ...s, table: frame };
    case "events":
      return onEvents(s, frame);
    case "view":
      return onView(s, frame);
    case "change":
      return onChange(s, frame);
    case "rejected":
    case "error":
      if (STOPPED.includes(frame.code) && !frame.command_id) return { ...s, sentFor: null }; // the close that follows says it
      return { ...s, sentFor: null, notice: { code: frame.code, params: frame.params || {} } };
    // --- the page's own frames ---
    case "ui:closed": // the socket closed: {code, reason}
      if (frame.code === 1008 && STOPPED.includes(frame.reason)) return { ...s, status: "stopped", stopped: frame.reason, notice: null };
      if (frame.reason && !s.notice) return { ...s, status: "offline", notice: { code: frame.reason, params: {} }, closeNotice: true };
      return { ...s, status: "offline" };
    case "ui:connecting":
      return { ...s, status: s.stopped ? s.status : "connecting" };
    case "ui:use-here":
      return { ...s, stopped: null, status: "connecting" };
    case "ui:select": {
      // A tile chosen (or unchosen) for the exchange: at most three.
      const has = s.selected.includes(frame.key);
      if (has) return { ...s, focusKey: frame.key, selected: s.selected.filter((k) => k !== frame.key) };
      if (s.selected.length >= 3) return { ...s, focusKey: frame.key };
      return { ...s, focusKey: frame.key, selected: [...s.selected, frame.key] };
    }
    case "ui:sent":
      return { ...s, sentFor: decisionKey(s), notice: null };
    case "ui:focus":
      return { ...s, focusKey: frame.key };
    case "ui:waits": // the waits help switched on or off
      return { ...s, waitsHelp: frame.on === undefined ? !s.waitsHelp : Boolean(frame.on) };
    case "ui:hint": // a hand tile hovered or focused (null: none)
      return { ...s, hintTile: frame.tile || null };
    case "ui:help":
      return { ...s, helpOpen: frame.open === undefined ? !s.helpOpen : Boolean(frame.open) };
    case "ui:log":
      return { ...s, logOpen: frame.open === undefined ? !s.logOpen : Boolean(frame.open) };
    case "ui:result":
      return { ...s, showResult: Boolean(frame.show), logOpen: frame.show ? s.logOpen : true };
    case "ui:confirm-leave":
      return { ...s, confirmLeave: Boolean(frame.open) };
    case "ui:notice":
      return { ...s, notice: frame.notice || null };
    case "ui:left":
      return { ...s, confirmLeave: false, practice: s.practice ? { ...s.practice, finished: true, paused: false } : null };
    default:
      return s;
  }
}
