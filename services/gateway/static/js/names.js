// Display names as the register form checks them while the player types: the same limits
// as the server (services/gateway/names.py: MIN_LENGTH, MAX_LENGTH), counted the same way
// (user-perceived characters, i.e. grapheme clusters, after trimming and NFC). The server
// checks every rule again and its reason is what the form shows for the rest (characters,
// scripts, reserved, taken); nothing here cuts what the player typed.
export const MIN_NAME = 2;
export const MAX_NAME = 24;

const segmenter = typeof Intl !== "undefined" && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

// The name the server will store for `typed`: trimmed, in NFC.
export function nameOf(typed) {
  return String(typed || "").trim().normalize("NFC");
}

// User-perceived characters in `text` (code points where Intl.Segmenter is missing).
export function nameLength(text) {
  if (segmenter) {
    let n = 0;
    for (const _ of segmenter.segment(text)) n += 1;
    return n;
  }
  return Array.from(text).length;
}

// The length rule `typed` breaks, as the server's code and params; null when it keeps it.
export function nameProblem(typed) {
  const n = nameLength(nameOf(typed));
  if (n > MAX_NAME) return { code: "name_too_long", params: { max: MAX_NAME } };
  if (n < MIN_NAME) return { code: "name_too_short", params: { min: MIN_NAME } };
  return null;
}
