// The pages' number formatting (services/gateway/static/js/format.js): never a negative zero.
//   node --test tests/client/
import assert from "node:assert/strict";
import { test } from "node:test";

import { fixed, signed } from "../../services/gateway/static/js/format.js";

test("a change that rounds to zero prints as 0.0, without a sign", () => {
  assert.equal(signed(-1.18e-15, 1), "0.0");
  assert.equal(signed(-0.04, 1), "0.0");
  assert.equal(signed(-0, 1), "0.0");
  assert.equal(signed(0, 0), "0");
});

test("a figure that rounds to zero never prints as -0", () => {
  assert.equal(fixed(-1.18e-15, 1), "0.0");
  assert.equal(fixed(-0.4, 0), "0");
  assert.equal(fixed(-0, 2), "0.00");
});

test("changes carry their sign, figures their decimals", () => {
  assert.equal(signed(12.46, 1), "+12.5");
  assert.equal(signed(-3, 1), "-3.0");
  assert.equal(fixed(1512.34, 1), "1512.3");
  assert.equal(fixed(1500, 0), "1500");
});

test("figures follow the page's language and a missing one is a dash", () => {
  assert.equal(fixed(1512.34, 1, "de"), "1512,3");
  assert.equal(signed(-2.26, 1, "de"), "-2,3");
  assert.equal(fixed(null, 1), "—");
  assert.equal(signed(undefined, 1), "—");
});
