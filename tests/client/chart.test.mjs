// Unit tests of the rating chart's geometry (services/gateway/static/js/chart.js): one point
// per rated hand, inside the plot, round ticks that cover every rating. Run with:
//   node --test tests/client/
import assert from "node:assert/strict";
import { test } from "node:test";

import { chartModel, niceStep, ticks } from "../../services/gateway/static/js/chart.js";

function history(deltas, start = 1500) {
  let r = start;
  return deltas.map((d, i) => {
    const c = { hand_id: `t${i}#1`, points: d > 0 ? 3 : -1, rating_before: r, rating_after: r + d, delta: d, rated_hands: i + 1 };
    r += d;
    return c;
  });
}

test("one point per rated hand, in order, inside the plot", () => {
  for (const n of [1, 2, 9, 37, 250]) {
    const h = history(Array.from({ length: n }, (_, i) => ((i * 7) % 11) - 5));
    for (const width of [350, 900]) {
      const m = chartModel(h, width, 240);
      assert.equal(m.points.length, n);
      assert.equal(m.line.length, n + 1); // the start, then every hand
      assert.deepEqual(m.points.map((p) => p.index), Array.from({ length: n }, (_, i) => i + 1));
      for (const p of m.line) {
        assert.ok(p.x >= m.plot.left - 1e-9 && p.x <= m.plot.right + 1e-9, `x ${p.x}`);
        assert.ok(p.y >= m.plot.top - 1e-9 && p.y <= m.plot.bottom + 1e-9, `y ${p.y}`);
      }
      for (let i = 1; i < m.points.length; i++) assert.ok(m.points[i].x > m.points[i - 1].x);
    }
  }
});

test("a higher rating is drawn higher", () => {
  const m = chartModel(history([20, -40]), 600, 240);
  assert.ok(m.points[0].y < m.line[0].y && m.points[1].y > m.line[0].y);
});

test("the ticks are round, few, and span every rating", () => {
  const h = history([31.4, -12.2, 55.1, -80.3, 3.3]);
  const m = chartModel(h, 600, 240);
  assert.ok(m.yTicks.length >= 3 && m.yTicks.length <= 7, `${m.yTicks.length} y ticks`);
  const values = [1500, ...h.map((c) => c.rating_after)];
  assert.ok(m.yTicks[0].value <= Math.min(...values) && m.yTicks.at(-1).value >= Math.max(...values));
  for (const t of m.yTicks) assert.equal(t.value % 10, 0);
  assert.ok(m.xTicks.length >= 2 && m.xTicks.length <= 7);
  assert.ok(m.xTicks.every((t) => Number.isInteger(t.value)));
});

test("a flat or empty history still has a scale", () => {
  const flat = chartModel(history([0, 0]), 400, 220);
  assert.ok(flat.yTicks.length >= 2 && flat.points.every((p) => Number.isFinite(p.y)));
  const none = chartModel([], 400, 220);
  assert.equal(none.points.length, 0);
  assert.equal(none.start, 1500);
});

test("nice steps are 1, 2 or 5 times a power of ten", () => {
  assert.equal(niceStep(100, 4), 50);
  assert.equal(niceStep(7, 5), 2);
  assert.equal(niceStep(0, 4), 1);
  assert.deepEqual(ticks(1490, 1530, 10), [1490, 1500, 1510, 1520, 1530]);
});

test("no tick reads -0", () => {
  for (const t of ticks(-0.5, 3, 1)) assert.ok(!Object.is(t, -0));
  assert.ok(!Object.is(chartModel([], 400, 220).xTicks[0].value, -0));
});
