// Unit tests of the computer review's pure state (services/gateway/static/js/review-state.js):
// asking, waiting and the answer; which replay step each decision's mark is on; the marks
// along the slider; a decision's options. Run with `node --test tests/client/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FEW_OPTIONS, boardMarks, decisionsByStep, initialReview, nextMarked, optionRows, polling, shownRows, stepOf, summary, timeline, update } from "../../services/gateway/static/js/review-state.js";

const steps = [6, 10, 14, 30, 35, 40, 90].map((seq) => ({ seq }));
const discard = (tile) => ({ type: "discard", seat: 0, tile });
const decision = (seat, seq, mark, extra = {}) => ({
  seat,
  seq,
  kind: "turn",
  played: discard("5s"),
  best: discard("5s"),
  loss: 0,
  mark,
  options: [{ option: discard("5s"), value: 1.5 }],
  ...extra,
});
const review = {
  hand_id: "t#1",
  table_id: "t",
  seats: [
    { seat: 2, player_id: "p2", decisions: 3, accuracy: 61.5, best: 1, inaccuracies: 1, mistakes: 0, blunders: 1 },
    { seat: 0, player_id: "p0", decisions: 1, accuracy: 100, best: 1 },
  ],
  decisions: [decision(0, 30, "best"), decision(2, 31, "inaccuracy"), decision(2, 35, "blunder"), decision(2, 8, "best")],
};
const done = { hand_id: "t#1", status: "done", review };

test("a replay opens with its review loading, and a hand not reviewed offers to ask", () => {
  const s = initialReview();
  assert.equal(s.status, "loading");
  assert.equal(update(s, { type: "refused", code: "review_not_found" }).status, "none");
});

test("asking waits for the answer, then polls while the review is pending", () => {
  let s = update(initialReview(), { type: "refused", code: "review_not_found" });
  s = update(s, { type: "ui:request" });
  assert.equal(s.status, "requesting");
  assert.equal(polling(s), false);
  s = update(s, { type: "answer", body: { hand_id: "t#1", status: "pending" } });
  assert.equal(s.status, "pending");
  assert.equal(polling(s), true);
  s = update(s, { type: "answer", body: done });
  assert.equal(s.status, "done");
  assert.equal(s.review, review);
  assert.equal(polling(s), false);
});

test("a refused poll keeps polling and says why; a refused request offers to ask again", () => {
  const pending = update(initialReview(), { type: "answer", body: { status: "pending" } });
  const s = update(pending, { type: "refused", code: "rate_limited", params: {} });
  assert.equal(s.status, "pending");
  assert.deepEqual(s.notice, { code: "rate_limited", params: {} });
  const asking = { ...initialReview(), status: "requesting" };
  const refused = update(asking, { type: "refused", code: "hand_not_ended", params: { hand_id: "t#1" } });
  assert.equal(refused.status, "none");
  assert.equal(refused.notice.code, "hand_not_ended");
});

test("asking twice sends one request", () => {
  const asking = update({ ...initialReview(), status: "none" }, { type: "ui:request" });
  assert.equal(update(asking, { type: "ui:request" }), asking);
});

test("a decision's mark is on the step of its event, else on the step shown when it was made", () => {
  assert.equal(stepOf(steps, 30), 3); // a discard: its own step
  assert.equal(stepOf(steps, 31), 3); // a pass: the discard it answered
  assert.equal(stepOf(steps, 8), 0); // the exchange chosen: the deal
  assert.equal(stepOf(steps, 2), -1);
  const by = decisionsByStep(review, steps);
  assert.deepEqual([...by.keys()].sort(), [0, 3, 4]);
  assert.deepEqual(by.get(3).map((d) => d.seat), [0, 2]);
});

test("the board shows each seat's worst mark of the step", () => {
  const by = decisionsByStep(review, steps);
  assert.deepEqual(boardMarks(by.get(3)), { 0: "best", 2: "inaccuracy" });
  assert.deepEqual(boardMarks([decision(1, 5, "mistake"), decision(1, 5, "inaccuracy")]), { 1: "mistake" });
  assert.deepEqual(boardMarks(undefined), {});
});

test("the slider marks the steps with a decision that was not the best, and jumps between them", () => {
  const marks = timeline(decisionsByStep(review, steps));
  assert.deepEqual(marks, [
    { at: 3, mark: "inaccuracy", seats: [2] },
    { at: 4, mark: "blunder", seats: [2] },
  ]);
  assert.equal(nextMarked(marks, 0, 1), 3);
  assert.equal(nextMarked(marks, 3, 1), 4);
  assert.equal(nextMarked(marks, 4, 1), null);
  assert.equal(nextMarked(marks, 6, -1), 4);
  assert.equal(nextMarked(marks, 3, -1), null);
});

test("a decision's options: the expert's choice, the move played and what each gives up", () => {
  const d = decision(2, 35, "blunder", {
    played: discard("3m"),
    best: discard("9p"),
    loss: 4,
    options: [
      { option: discard("9p"), value: 2 },
      { option: discard("1s"), value: 1.5 },
      { option: discard("3m"), value: -2 },
    ],
  });
  const rows = optionRows(d);
  assert.deepEqual(rows.map((r) => [r.option.tile, r.best, r.played, r.loss]), [
    ["9p", true, false, 0],
    ["1s", false, false, 0.5],
    ["3m", false, true, 4],
  ]);
});

test("the exchange's options match whatever order its tiles come in", () => {
  const mine = { type: "choose_exchange", seat: 0, tiles: ["3m", "1m", "2m"] };
  const d = decision(0, 8, "best", { kind: "exchange", played: mine, best: { ...mine, tiles: ["1m", "2m", "3m"] }, options: [{ option: { ...mine, tiles: ["2m", "1m", "3m"] }, value: 0 }] });
  const [row] = optionRows(d);
  assert.equal(row.best && row.played, true);
});

test("the summary lists the reviewed seats in seat order", () => {
  assert.deepEqual(summary(review).map((s) => s.seat), [0, 2]);
  assert.deepEqual(summary(null), []);
});

test("the options open and close", () => {
  const s = update(initialReview(), { type: "ui:options" });
  assert.equal(s.open, true);
  assert.equal(update(s, { type: "ui:options" }).open, false);
});

const rowsOf = (n, playedAt) =>
  Array.from({ length: n }, (_, i) => ({ value: -i, loss: i, best: i === 0, played: i === playedAt }));

test("a long options list shows the best few and the one played, with the rest left out", () => {
  const { rows, hidden } = shownRows(rowsOf(30, 12), false);
  assert.equal(rows.length, FEW_OPTIONS + 1);
  assert.deepEqual(rows.map((r) => r.loss), [0, 1, 2, 3, 4, 12]);
  assert.equal(hidden, 30 - FEW_OPTIONS - 1);
});

test("the played option among the best few is not shown twice", () => {
  const { rows, hidden } = shownRows(rowsOf(30, 2), false);
  assert.equal(rows.length, FEW_OPTIONS);
  assert.equal(hidden, 30 - FEW_OPTIONS);
});

test("show all shows every option, and a list one row too long is never shortened", () => {
  assert.equal(shownRows(rowsOf(30, 12), true).rows.length, 30);
  assert.equal(shownRows(rowsOf(FEW_OPTIONS + 1, 5), false).hidden, 0);
  assert.equal(shownRows(rowsOf(FEW_OPTIONS + 1, 5), false).rows.length, FEW_OPTIONS + 1);
});

test("the all-options click toggles and leaves the review as it was", () => {
  const s = { ...initialReview(), status: "done", open: true };
  const all = update(s, { type: "ui:all-options" });
  assert.equal(all.all, true);
  assert.equal(all.open, true);
  assert.equal(update(all, { type: "ui:all-options" }).all, false);
});

test("a single option is never left out behind the button", () => {
  const { rows, hidden } = shownRows(rowsOf(FEW_OPTIONS + 2, FEW_OPTIONS), false);
  assert.equal(hidden, 0);
  assert.equal(rows.length, FEW_OPTIONS + 2);
});

test("options the screen left out are marked rough and never set the best value", () => {
  const d = decision(0, 40, "inaccuracy", {
    played: discard("9s"),
    best: discard("2p"),
    loss: 0.5,
    options: [
      { option: discard("2p"), value: 1.0 },
      { option: discard("9s"), value: 0.5 },
      { option: discard("7m"), value: 1.8, screened: true },
    ],
  });
  const rows = optionRows(d);
  assert.deepEqual(rows.map((r) => r.screened), [false, false, true]);
  assert.deepEqual(rows.map((r) => r.loss), [0, 0.5, 0]);
  assert.equal(rows[0].best, true);
});
