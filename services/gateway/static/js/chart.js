// The rating chart's geometry, pure (no DOM): from a player's whole rating history (oldest
// first, one change per rated hand) and a size in pixels to the line, one point per rated
// hand, and a few round ticks on each axis. profile.js draws it as SVG; tests run it in Node.

// A round step (1, 2 or 5 times a power of ten) that cuts `span` into about `count` parts.
export function niceStep(span, count) {
  if (!(span > 0)) return 1;
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  const factor = scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10;
  return factor * power;
}

// The multiples of `step` from `lo` to `hi` (both included when on a multiple).
export function ticks(lo, hi, step) {
  const out = [];
  const first = Math.ceil(lo / step - 1e-9) * step;
  for (let v = first; v <= hi + 1e-9; v += step) out.push(Math.round(v / step) * step + 0); // + 0: no -0
  return out;
}

// history: [{hand_id, rating_before, rating_after, delta, points, rated_hands}], oldest first.
// Returns {width, height, plot: {left, top, right, bottom}, start, points, line, xTicks,
// yTicks}; x of a point is its rated hand's number (1..n), x 0 is the start (before the first
// rated hand, no point of its own).
export function chartModel(history, width, height) {
  const narrow = width < 480;
  const plot = { left: narrow ? 44 : 56, top: 14, right: width - (narrow ? 12 : 20), bottom: height - (narrow ? 30 : 34) };
  const n = history.length;
  const start = n ? history[0].rating_before : 1500;
  const values = [start, ...history.map((c) => c.rating_after)];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 20) {
    const mid = (hi + lo) / 2;
    lo = mid - 10;
    hi = mid + 10;
  }
  const yStep = niceStep(hi - lo, narrow ? 3 : 4);
  lo = Math.floor(lo / yStep) * yStep;
  hi = Math.ceil(hi / yStep) * yStep;
  const xMax = Math.max(1, n);
  const x = (i) => plot.left + ((plot.right - plot.left) * i) / xMax;
  const y = (v) => plot.bottom - ((plot.bottom - plot.top) * (v - lo)) / (hi - lo);
  const points = history.map((c, i) => ({
    index: i + 1,
    hand_id: c.hand_id,
    rating: c.rating_after,
    delta: c.delta,
    points: c.points,
    x: x(i + 1),
    y: y(c.rating_after),
  }));
  const line = [{ x: x(0), y: y(start) }, ...points.map((p) => ({ x: p.x, y: p.y }))];
  const xStep = Math.max(1, Math.round(niceStep(xMax, narrow ? 3 : 5)));
  const xTicks = ticks(0, xMax, xStep).map((v) => ({ value: v, x: x(v) }));
  const yTicks = ticks(lo, hi, yStep).map((v) => ({ value: v, y: y(v) }));
  return { width, height, plot, start, points, line, xTicks, yTicks };
}
