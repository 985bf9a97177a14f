// The computer review in the replay viewer, pure (no page, no network, no clock): one state
// and its `update(state, frame)`, and what a replay step shows of the review. js/replay.js
// keeps one such state beside the replay's, feeds it the server's answers and the player's
// clicks, and draws it.
//
// A review (GET /api/hands/{id}/review, docs/gateway.md "Computer reviews") lists the
// reviewed seats' decisions; each names the `seq` of the first event its command produced.
// A replay's steps are its game actions only, so a decision whose event is bookkeeping (a
// pass, a claim, the exchange chosen, the missing suit declared) belongs to the step shown
// when it was made: the last step at or before its seq (a pass: the discard it answered).

export const POLL_MS = 2000;
export const MARKS = ["best", "inaccuracy", "mistake", "blunder"];
export const MARK_SYMBOL = { best: "✓", inaccuracy: "?!", mistake: "?", blunder: "??" };

// status: loading (the first GET), none (no review: one may ask), requesting (the POST is
// on its way), pending (asked; polling), done; `notice`: the last refusal ({code, params}).
export function initialReview() {
  return { status: "loading", review: null, notice: null, open: false, all: false };
}

// Frames: {type: "answer", body} (a 200 or 202 of either route), {type: "refused", code,
// params} (an error answer), {type: "ui:request"} (the player asks), {type: "ui:options"}
// (show or hide the current step's options), {type: "ui:all-options"} (every option, or
// only the best few and the one played).
export function update(state, frame) {
  switch (frame.type) {
    case "answer": {
      const body = frame.body || {};
      if (body.status === "done" && body.review) return { ...state, status: "done", review: body.review, notice: null };
      if (body.status === "pending") return { ...state, status: "pending", notice: null };
      return state;
    }
    case "refused":
      if (frame.code === "review_not_found") return { ...state, status: "none", notice: null };
      // A poll refused for a while (too fast, the gateway restarting) goes on polling.
      if (state.status === "pending") return { ...state, notice: { code: frame.code, params: frame.params || {} } };
      return { ...state, status: state.status === "requesting" || state.status === "loading" ? "none" : state.status, notice: { code: frame.code, params: frame.params || {} } };
    case "ui:request":
      return state.status === "none" ? { ...state, status: "requesting", notice: null } : state;
    case "ui:options":
      return { ...state, open: !state.open };
    case "ui:all-options":
      return { ...state, all: !state.all };
    default:
      return state;
  }
}

// Whether the page should ask again in POLL_MS.
export function polling(state) {
  return state.status === "pending";
}

// The index of the step a decision of event `seq` belongs to: the step of that seq, else the
// last one before it (-1: before the first step).
export function stepOf(steps, seq) {
  let lo = 0;
  let hi = steps.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid].seq <= seq) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

// Every reviewed decision by step index: Map(index -> [decision, …] in seat order).
export function decisionsByStep(review, steps) {
  const out = new Map();
  if (!review) return out;
  for (const d of review.decisions) {
    const at = Math.max(0, stepOf(steps, d.seq));
    if (!out.has(at)) out.set(at, []);
    out.get(at).push(d);
  }
  for (const list of out.values()) list.sort((a, b) => a.seat - b.seat || a.seq - b.seq);
  return out;
}

function worse(a, b) {
  return MARKS.indexOf(a) >= MARKS.indexOf(b) ? a : b;
}

// The worst mark of each seat's decisions at one step: {seat: mark} (for the board).
export function boardMarks(decisions) {
  const out = {};
  for (const d of decisions || []) out[d.seat] = out[d.seat] ? worse(out[d.seat], d.mark) : d.mark;
  return out;
}

// The marks along the step slider: one per step with a decision that was not the best, its
// worst mark, at `at` of `total` steps; best decisions are not drawn (they are most of them).
export function timeline(byStep) {
  const out = [];
  for (const [at, list] of byStep) {
    const mark = list.map((d) => d.mark).reduce(worse, "best");
    if (mark !== "best") out.push({ at, mark, seats: [...new Set(list.filter((d) => d.mark !== "best").map((d) => d.seat))] });
  }
  return out.sort((a, b) => a.at - b.at);
}

// The step after (dir 1) or before (dir -1) `at` with a mark on the timeline; null: none.
export function nextMarked(marks, at, dir) {
  const list = dir > 0 ? marks.filter((m) => m.at > at) : marks.filter((m) => m.at < at).reverse();
  return list.length ? list[0].at : null;
}

// What a command is, to compare options with the move played and the expert's choice.
export function optionKey(command) {
  if (!command) return "";
  const tiles = command.tiles ? [...command.tiles].sort().join(",") : "";
  return [command.type, command.tile || "", command.suit || "", tiles].join("|");
}

// A decision's options as its table shows them, in the review's order (the options valued in
// full best first, then those the first pass screened out): value, loss against the best,
// whether it is the expert's choice, whether it was played, whether its value is the rough one
// of the screen (`screened`: never the best; an older review has none).
export function optionRows(decision) {
  const best = optionKey(decision.best);
  const played = optionKey(decision.played);
  const full = decision.options.filter((o) => !o.screened);
  const top = full.length ? Math.max(...full.map((o) => o.value)) : 0;
  return decision.options.map((o) => {
    const key = optionKey(o.option);
    return { option: o.option, value: o.value, loss: Math.max(0, top - o.value), best: key === best, played: key === played, screened: Boolean(o.screened) };
  });
}

// How many options a table shows before "show all": an exchange has dozens (every three
// tiles of a suit), and past the best few their order says little.
export const FEW_OPTIONS = 5;

// The rows a table shows: all of them, or the best FEW_OPTIONS and the one played (wherever
// it ranks), with how many are left out. Never hides a single row behind the button.
export function shownRows(rows, all) {
  if (all || rows.length <= FEW_OPTIONS + 1) return { rows, hidden: 0 };
  const shown = rows.filter((r, i) => i < FEW_OPTIONS || r.played);
  const hidden = rows.length - shown.length;
  return hidden > 1 ? { rows: shown, hidden } : { rows, hidden: 0 };
}

// The review's summary: each reviewed seat's accuracy and counts, in seat order.
export function summary(review) {
  if (!review) return [];
  return [...review.seats].sort((a, b) => a.seat - b.seat);
}
