// The replay viewer's state, pure (no page, no network): which step is shown and as whom,
// and what that step draws. js/replay.js keeps one such state and draws `frame(data, state)`.
//
// A replay (GET /api/hands/{id}/replay) is a list of steps, one per game action (the deal,
// the exchange, the missing suits, each draw, discard, claim, kong, win, and the end; the
// server's STEP_EVENTS). Each step holds the view after its action and `at_ms`, the moment it
// happened: the view's clocks are read at that moment, so they show what the live table
// showed then. The settlement belongs to the last step only.

export const PLAY_INTERVAL_MS = 800;

// `seat`: null for every hand open, else the seat whose view is shown; `home`: the seat at
// the bottom with every hand open (the viewer's own, if it played the hand).
export function initialReplay({ at = 0, seat = null, playing = false, home = 0 } = {}) {
  return { at, seat, playing, home };
}

export function stepCount(data) {
  return data && data.steps ? data.steps.length : 0;
}

// Step `n`, kept inside the replay.
export function goTo(state, data, n) {
  const last = Math.max(0, stepCount(data) - 1);
  const at = Math.max(0, Math.min(last, Number.isFinite(n) ? Math.trunc(n) : 0));
  return { ...state, at, playing: state.playing && at < last };
}

// One tick of play: the next step, stopping at the last.
export function advance(state, data) {
  if (!state.playing) return state;
  const next = goTo(state, data, state.at + 1);
  return next.at >= stepCount(data) - 1 ? { ...next, playing: false } : next;
}

// Play from here (from the start when at the end), or pause.
export function togglePlay(state, data) {
  if (state.playing) return { ...state, playing: false };
  const last = stepCount(data) - 1;
  return { ...state, at: state.at >= last ? 0 : state.at, playing: last > 0 };
}

// Another seat's view (or every hand open): the same step, found by its seq, in `data` (the
// replay fetched for that option; every option has the same steps).
export function switchSeat(state, from, to, seat) {
  const seq = from && from.steps[state.at] ? from.steps[state.at].seq : null;
  const at = seq === null ? state.at : Math.max(0, to.steps.findIndex((s) => s.seq === seq));
  return goTo({ ...state, seat }, to, at);
}

// The type of a step's event; a hidden one (another seat's draw, in a seat's view) by the
// type it hides.
export function stepKind(event) {
  return event.type === "hidden" ? event.event : event.type;
}

// What step `state.at` draws: the view, the moment its clocks are read at (null: untimed),
// the seat at the bottom, the newest discard to mark, and the settlement (last step only).
export function frame(data, state) {
  const total = stepCount(data);
  const step = data.steps[state.at];
  const last = state.at === total - 1;
  const event = step.event;
  const kind = stepKind(event);
  return {
    step,
    view: step.view,
    kind,
    n: state.at + 1,
    total,
    serverNow: step.at_ms ?? null,
    bottom: state.seat ?? state.home ?? 0,
    lastDiscard: kind === "tile_discarded" ? { seat: event.seat } : null,
    settlement: last ? { events: data.settlement || [], view: step.view } : null,
  };
}

// The link that opens this replay: the page's address with the replay's route.
export function shareUrl(loc, handId) {
  return `${loc.origin}${loc.pathname}#/replay/${encodeURIComponent(handId)}`;
}
