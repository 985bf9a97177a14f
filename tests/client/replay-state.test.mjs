// Unit tests of the replay viewer's pure state (services/gateway/static/js/replay-state.js):
// which step is shown, as whom, the moment its clocks are read at, and the settlement at the
// last step only. Run with `node --test tests/client/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { advance, frame, goTo, initialReplay, shareUrl, stepKind, switchSeat, togglePlay } from "../../services/gateway/static/js/replay-state.js";

const step = (seq, event, at_ms = null) => ({ seq, event: { seq, ...event }, view: { seq, phase: "play", players: [] }, at_ms });
const replay = (steps, extra = {}) => ({ hand_id: "t#1", names: {}, steps, settlement: [{ type: "hand_ended" }], ...extra });
const data = replay([
  step(6, { type: "wall_built" }, 1000),
  step(30, { type: "tile_discarded", seat: 0, tile: "5s" }, 4200),
  step(31, { type: "tile_drawn", seat: 1, tile: "1m" }, 4200),
  step(90, { type: "hand_ended" }, 9000),
]);

test("a replay opens at its first step, the deal", () => {
  const f = frame(data, initialReplay());
  assert.equal(f.n, 1);
  assert.equal(f.total, 4);
  assert.equal(f.kind, "wall_built");
});

test("steps stay inside the replay", () => {
  const s = initialReplay();
  assert.equal(goTo(s, data, -3).at, 0);
  assert.equal(goTo(s, data, 99).at, 3);
  assert.equal(goTo(s, data, 2).at, 2);
  assert.equal(goTo(s, data, Number.NaN).at, 0);
});

test("each step's clocks are read at the moment of its action", () => {
  const s = goTo(initialReplay(), data, 1);
  assert.equal(frame(data, s).serverNow, 4200);
  const untimed = replay([step(1, { type: "wall_built" })]);
  assert.equal(frame(untimed, initialReplay()).serverNow, null);
});

test("the settlement shows at the last step only", () => {
  for (let at = 0; at < 3; at++) assert.equal(frame(data, goTo(initialReplay(), data, at)).settlement, null);
  const last = frame(data, goTo(initialReplay(), data, 3));
  assert.deepEqual(last.settlement.events, [{ type: "hand_ended" }]);
  assert.equal(last.settlement.view, data.steps[3].view);
});

test("a discard's step marks that seat's newest discard", () => {
  assert.deepEqual(frame(data, goTo(initialReplay(), data, 1)).lastDiscard, { seat: 0 });
  assert.equal(frame(data, goTo(initialReplay(), data, 2)).lastDiscard, null);
});

test("play runs to the last step and stops; play at the end starts over", () => {
  let s = togglePlay(initialReplay(), data);
  assert.equal(s.playing, true);
  s = advance(s, data);
  s = advance(s, data);
  s = advance(s, data);
  assert.equal(s.at, 3);
  assert.equal(s.playing, false);
  assert.equal(advance(s, data), s);
  const again = togglePlay(s, data);
  assert.deepEqual([again.at, again.playing], [0, true]);
  assert.equal(togglePlay(again, data).playing, false);
});

test("switching the view keeps the step and puts that seat at the bottom", () => {
  const asSeat = replay(data.steps.map((x) => ({ ...x, view: { ...x.view, seat: 2 } })));
  const s = switchSeat(goTo(initialReplay({ home: 1 }), data, 2), data, asSeat, 2);
  assert.equal(s.at, 2);
  assert.equal(frame(asSeat, s).bottom, 2);
  assert.equal(frame(data, { ...s, seat: null }).bottom, 1); // every hand open: the viewer's seat
});

test("another seat's draw, hidden in a seat's view, is still a draw", () => {
  assert.equal(stepKind({ type: "hidden", event: "tile_drawn", seat: 3 }), "tile_drawn");
  assert.equal(stepKind({ type: "punged" }), "punged");
});

test("the share link is the page's address with the replay's route", () => {
  assert.equal(shareUrl({ origin: "https://mp.example", pathname: "/" }, "t-ab#3"), "https://mp.example/#/replay/t-ab%233");
});
