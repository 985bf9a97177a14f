// Unit tests of the web client's table state (services/gateway/static/js/table-state.js):
// one state object, one pure update(state, frame). Run with Node's own test runner:
//   node --test tests/client/
import assert from "node:assert/strict";
import { test } from "node:test";

import { decisionKey, initialState, lastSeq, legalActions, update, waitsShown } from "../../services/gateway/static/js/table-state.js";

const view = (over = {}) => ({
  seat: 0,
  phase: "play",
  players: [0, 1, 2, 3].map((seat) => ({ seat, player: `p${seat}`, discards: [], melds: [], score: 0 })),
  legal_actions: [{ type: "discard", tile: "5m" }],
  paused: false,
  ...over,
});
const viewFrame = (over = {}, v = {}) => ({ type: "view", hand_id: "t#1", seq: 5, decision_seq: 3, names: {}, view: view(v), ...over });
const events = (seqs, hand = "t#1", extra = {}) => ({ type: "events", hand_id: hand, events: seqs.map((seq) => ({ seq, type: "tile_discarded", seat: 1, tile: "1m", ...extra })) });

function frozen(s) {
  return JSON.parse(JSON.stringify(s));
}

test("update never changes the state it is given", () => {
  const s0 = initialState({ tableId: "t" });
  const copy = frozen(s0);
  const frames = [
    { type: "welcome", role: "player", server_ms: 1000, now: 900 },
    events([1, 2, 3]),
    viewFrame(),
    { type: "ui:select", key: "h1" },
    { type: "rejected", code: "not_your_turn", params: {}, command_id: "c1" },
  ];
  let s = s0;
  for (const f of frames) {
    const before = frozen(s);
    const next = update(s, f);
    assert.deepEqual(frozen(s), before, `frame ${f.type} changed its input`);
    s = next;
  }
  assert.deepEqual(frozen(s0), copy);
});

test("welcome: online, and the clock offset from the stamped time", () => {
  const s = update(initialState({ tableId: "t" }), { type: "welcome", role: "player", server_ms: 5000, now: 4000 });
  assert.equal(s.status, "online");
  assert.equal(s.offset, 1000);
});

test("pong: round trip and offset", () => {
  const s = update(initialState({ tableId: "t" }), { type: "pong", t: 100, perf: 140, server_ms: 10_000, now: 9_000 });
  assert.equal(s.rtt, 40);
  assert.equal(s.offset, 10_000 + 20 - 9_000);
});

test("events: the backlog is not news, later events are, and a new hand starts afresh", () => {
  let s = update(initialState({ tableId: "t" }), events([1, 2, 3]));
  assert.equal(s.events.length, 3);
  assert.deepEqual(s.news, []);
  s = update(s, events([3, 4]));
  assert.deepEqual(s.news.map((e) => e.seq), [4]);
  assert.equal(lastSeq(s), 4);
  s = update(s, events([1], "t#2"));
  assert.equal(s.handId, "t#2");
  assert.equal(s.events.length, 1);
  assert.deepEqual(s.news, []);
});

test("events out of order are kept by seq, and lastSeq stops at a gap", () => {
  let s = update(initialState({ tableId: "t" }), events([1, 2]));
  s = update(s, events([5, 3]));
  assert.deepEqual(s.events.map((e) => e.seq), [1, 2, 3, 5]);
  assert.equal(lastSeq(s), 3);
});

test("hand_ended shows the result; a new hand hides it again", () => {
  let s = update(initialState({ tableId: "t" }), events([1]));
  s = update(s, { type: "events", hand_id: "t#1", events: [{ seq: 2, type: "hand_ended", scores: [1, -1, 0, 0], placements: [1, 4, 2, 2], end: "wall_exhausted" }] });
  assert.equal(s.showResult, true);
  s = update(s, { type: "ui:result", show: false });
  assert.equal(s.showResult, false);
  assert.equal(s.logOpen, true, "closing the result opens the log panel, where the settlement stays");
  s = update(s, { type: "ui:result", show: true });
  s = update(s, events([1], "t#2"));
  assert.equal(s.showResult, false);
});

test("view: a new decision clears the exchange selection and the sent mark", () => {
  let s = update(initialState({ tableId: "t" }), viewFrame({}, { legal_actions: [{ type: "choose_exchange", tiles: ["1m", "2m", "3m"] }] }));
  s = update(s, { type: "ui:select", key: "h0" });
  s = update(s, { type: "ui:select", key: "h1" });
  s = update(s, { type: "ui:sent" });
  assert.deepEqual(s.selected, ["h0", "h1"]);
  assert.equal(s.sentFor, decisionKey(s));
  // The same decision again (another seat's move shown): both stay.
  s = update(s, viewFrame({ seq: 6 }));
  assert.deepEqual(s.selected, ["h0", "h1"]);
  s = update(s, viewFrame({ seq: 7, decision_seq: 4 }));
  assert.deepEqual(s.selected, []);
  assert.equal(s.sentFor, null);
});

test("the exchange takes at most three tiles, and a second press unselects", () => {
  let s = initialState({ tableId: "t" });
  for (const key of ["h0", "h1", "h2", "h3"]) s = update(s, { type: "ui:select", key });
  assert.deepEqual(s.selected, ["h0", "h1", "h2"]);
  s = update(s, { type: "ui:select", key: "h1" });
  assert.deepEqual(s.selected, ["h0", "h2"]);
  assert.equal(s.focusKey, "h1");
});

test("paused: no legal actions while the hand is paused", () => {
  let s = update(initialState({ tableId: "t" }), viewFrame());
  assert.equal(legalActions(s).length, 1);
  s = update(s, viewFrame({}, { paused: true }));
  assert.equal(s.paused, true);
  assert.deepEqual(legalActions(s), []);
});

test("the end of a practice hand marks it finished; the next hand reopens it", () => {
  const practice = { table_id: "t", strength: "easy", pace: "fast" };
  let s = update(initialState({ tableId: "t", practice }), events([1]));
  s = update(s, viewFrame({}, { phase: "ended", end: "three_winners" }));
  assert.equal(s.finished.handId, "t#1");
  assert.equal(s.practice.finished, true);
  assert.equal(practice.finished, undefined, "the stored object is not changed");
  s = update(s, events([1], "t#2"));
  assert.equal(s.practice.finished, false);
});

test("a practice of another table is not this table's", () => {
  const s = initialState({ tableId: "t", practice: { table_id: "other" } });
  assert.equal(s.practice, null);
});

test("rejections become a notice; a stop code without a command waits for the close", () => {
  let s = update(initialState({ tableId: "t" }), { type: "ui:sent" });
  s = update(s, { type: "rejected", code: "not_your_turn", params: { seat: 1 }, command_id: "c1" });
  assert.deepEqual(s.notice, { code: "not_your_turn", params: { seat: 1 } });
  assert.equal(s.sentFor, null);
  const quiet = update(initialState({ tableId: "t" }), { type: "error", code: "opened_elsewhere" });
  assert.equal(quiet.notice, null);
});

test("a close: stopped for the stopping reasons, else offline with the reason as a notice that clears once back", () => {
  const stopped = update(initialState({ tableId: "t" }), { type: "ui:closed", code: 1008, reason: "opened_elsewhere" });
  assert.equal(stopped.stopped, "opened_elsewhere");
  assert.equal(stopped.status, "stopped");
  const back = update(stopped, { type: "ui:use-here" });
  assert.equal(back.stopped, null);
  let s = update(initialState({ tableId: "t" }), { type: "ui:closed", code: 1011, reason: "server_restart" });
  assert.equal(s.status, "offline");
  assert.deepEqual(s.notice, { code: "server_restart", params: {} });
  s = update(s, { type: "welcome", role: "player", server_ms: 1, now: 1 });
  assert.equal(s.notice, null);
});

test("the log panel, the key help and the leave dialog are state too", () => {
  let s = initialState({ tableId: "t", logOpen: false });
  s = update(s, { type: "ui:log" });
  assert.equal(s.logOpen, true);
  s = update(s, { type: "ui:help" });
  assert.equal(s.helpOpen, true);
  s = update(s, { type: "ui:confirm-leave", open: true });
  assert.equal(s.confirmLeave, true);
  s = update(s, { type: "ui:left" });
  assert.equal(s.confirmLeave, false);
});

test("unknown frames change nothing but the news", () => {
  const s = update(initialState({ tableId: "t" }), events([1]));
  const next = update(s, { type: "something_new" });
  assert.deepEqual({ ...next, news: [] }, { ...s, news: [] });
});

// --- the waits help (听牌提示) ---------------------------------------------------------------

const wait = (tile, unseen) => ({ tile, unseen, fan: 0, value: 1, patterns: [], discard: 1, self_drawn: 6 });

test("the waits help is on by default, and a switch turns it off and on", () => {
  const s0 = initialState({ tableId: "t" });
  assert.equal(s0.waitsHelp, true);
  assert.equal(initialState({ tableId: "t", waitsHelp: false }).waitsHelp, false);
  const off = update(s0, { type: "ui:waits" });
  assert.equal(off.waitsHelp, false);
  assert.equal(update(off, { type: "ui:waits" }).waitsHelp, true);
  assert.equal(update(off, { type: "ui:waits", on: false }).waitsHelp, false);
  assert.equal(s0.waitsHelp, true); // pure
});

test("a ready hand shows its waits from the view; switched off, nothing", () => {
  const help = { shanten: 0, waits: [wait("1p", 1), wait("4p", 2)], discards: [], payers: 3 };
  const s = update(initialState({ tableId: "t" }), viewFrame({}, { waits: help }));
  assert.deepEqual(waitsShown(s), { mode: "ready", waits: help.waits, payers: 3 });
  assert.equal(waitsShown(update(s, { type: "ui:waits", on: false })), null);
  const far = update(s, viewFrame({ seq: 6 }, { waits: { shanten: 2, waits: [], discards: [], payers: 3 } }));
  assert.deepEqual(waitsShown(far), { mode: "far", shanten: 2 });
  assert.equal(waitsShown(update(s, viewFrame({ seq: 7 }, { seat: null, waits: null }))), null);
});

test("while choosing a discard: the tiles that keep the hand ready, and the hovered one's waits", () => {
  const discards = [
    { tile: "1m", shanten: 1, waits: [] },
    { tile: "7p", shanten: 0, waits: [wait("1p", 1), wait("4p", 2)] },
    { tile: "9p", shanten: 0, waits: [wait("2p", 3)] },
  ];
  const s = update(initialState({ tableId: "t" }), viewFrame({}, { waits: { shanten: null, waits: [], discards, payers: 3 } }));
  const shown = waitsShown(s);
  assert.equal(shown.mode, "discard");
  assert.deepEqual(shown.keep, ["7p", "9p"]);
  assert.equal(shown.best, 0);
  assert.equal(shown.hint, null);
  const hovered = update(s, { type: "ui:hint", tile: "7p" });
  assert.deepEqual(waitsShown(hovered).hint, discards[1]);
  assert.equal(waitsShown(update(hovered, { type: "ui:hint", tile: null })).hint, null);
  // A new hand forgets the hovered tile.
  assert.equal(update(hovered, viewFrame({ hand_id: "t#2" })).hintTile, null);
});

// --- compact `change` frames ----------------------------------------------------------------

const change = (over = {}) => ({ type: "change", hand_id: "t#1", seq: 6, decision_seq: 3, events: [], view: {}, full: false, names: {}, server_ms: 0, ...over });

test("a change frame leaves the state an events frame and a view frame would", () => {
  const start = update(initialState({ tableId: "t" }), viewFrame({ names: { p0: "Ann" } }));
  const next = view({ legal_actions: [{ type: "discard", tile: "7p" }], phase: "play" });
  const split = update(update(start, events([6])), viewFrame({ seq: 6, names: { p0: "Ann" } }, next));
  const compact = update(start, change({ events: events([6]).events, view: { legal_actions: next.legal_actions } }));
  assert.deepEqual(compact.frame.view, split.frame.view);
  assert.deepEqual(compact.events, split.events);
  assert.deepEqual(compact.news, split.news);
  assert.deepEqual(compact.frame.names, { p0: "Ann" }, "names are kept when a change sends none");
  assert.equal(compact.frame.seq, 6);
});

test("a full change replaces the view; a new hand's change must be full", () => {
  let s = update(initialState({ tableId: "t" }), viewFrame());
  s = update(s, change({ hand_id: "t#2", seq: 1, view: { seat: 2, phase: "exchange" }, full: true, names: { p1: "Bo" }, events: events([1], "t#2").events }));
  assert.deepEqual(s.frame.view, { seat: 2, phase: "exchange" });
  assert.equal(s.handId, "t#2");
  assert.deepEqual(s.frame.names, { p1: "Bo" });
  const held = s;
  s = update(s, change({ hand_id: "t#3", view: { seat: 1 } }));
  assert.deepEqual(s.frame, held.frame, "a change with nothing to apply it to changes no view");
});

test("a change to a new decision clears the selection, as a view does", () => {
  let s = update(initialState({ tableId: "t" }), viewFrame({}, { legal_actions: [{ type: "choose_exchange", tiles: ["1m", "2m", "3m"] }] }));
  s = update(s, { type: "ui:select", key: "h0" });
  s = update(s, change({ seq: 6 }));
  assert.deepEqual(s.selected, ["h0"]);
  s = update(s, change({ seq: 7, decision_seq: 4 }));
  assert.deepEqual(s.selected, []);
});

test("a change names the changed fields of the player entries that changed", () => {
  let s = update(initialState({ tableId: "t" }), viewFrame());
  const before = s.frame.view.players;
  s = update(s, change({ players: { 1: { discards: ["3s"] } } }));
  const after = s.frame.view.players;
  assert.deepEqual(after[1], { ...before[1], discards: ["3s"] });
  assert.equal(after[0], before[0], "the others are the same objects");
  assert.deepEqual(after.length, 4);
});
