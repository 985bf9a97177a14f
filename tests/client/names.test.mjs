// Unit tests of the register form's live name check (services/gateway/static/js/names.js):
// the server's limits, counted in user-perceived characters after trimming and NFC.
//   node --test tests/client/
import assert from "node:assert/strict";
import { test } from "node:test";

import { MAX_NAME, MIN_NAME, nameLength, nameOf, nameProblem } from "../../services/gateway/static/js/names.js";

test("the limits are the server's: 2 to 24 characters", () => {
  assert.equal(MIN_NAME, 2);
  assert.equal(MAX_NAME, 24);
});

test("24 characters pass and 25 are too long, with the limit", () => {
  assert.equal(nameProblem("x".repeat(24)), null);
  assert.deepEqual(nameProblem("x".repeat(25)), { code: "name_too_long", params: { max: 24 } });
});

test("one character is too short and two are enough", () => {
  assert.deepEqual(nameProblem("B"), { code: "name_too_short", params: { min: 2 } });
  assert.equal(nameProblem("Bo"), null);
});

test("a letter with a combining mark is one character", () => {
  assert.equal(nameLength("Zoe\u0308"), 3);
  assert.equal(nameLength("e\u0301".repeat(24)), 24);
  assert.equal(nameProblem("e\u0301".repeat(24)), null);
});

test("Chinese names count their characters", () => {
  assert.equal(nameLength("李小龙"), 3);
  assert.equal(nameProblem("李".repeat(25)).code, "name_too_long");
});

test("spaces at the ends are trimmed and the name is put in NFC, as the server does", () => {
  assert.equal(nameOf("  Zoe\u0308 "), "Zoë");
  assert.deepEqual(nameProblem("  B  "), { code: "name_too_short", params: { min: 2 } });
});
