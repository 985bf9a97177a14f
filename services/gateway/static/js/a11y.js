// Screen-reader support shared by the pages: two live regions that stay in the page while the
// views under them are redrawn (a region drawn anew with each frame is not announced), and
// small helpers for text that is shown one way and spoken another.
import { setText } from "./i18n.js";

const KEEP = 6; // lines kept in a region: enough for a burst of events, never a backlog

function region(id) {
  return document.getElementById(id);
}

// Says `text` once: politely (turns, events) or, with `assertive`, at once (rejections).
export function announce(text, { assertive = false } = {}) {
  if (!text) return;
  const box = region(assertive ? "announce-assertive" : "announce-polite");
  if (!box) return;
  const line = setText(document.createElement("p"), text);
  box.append(line);
  while (box.childElementCount > KEEP) box.firstElementChild.remove();
}

export function clearAnnouncements() {
  for (const id of ["announce-polite", "announce-assertive"]) {
    const box = region(id);
    if (box) box.replaceChildren();
  }
}

// A span showing `shown` to the eye and saying `spoken` to screen readers.
export function spoken(shown, said, className = "") {
  const outer = document.createElement("span");
  if (className) outer.className = className;
  const eye = setText(document.createElement("span"), shown);
  eye.setAttribute("aria-hidden", "true");
  eye.className = "shown";
  const ear = setText(document.createElement("span"), said);
  ear.className = "sr-only";
  outer.append(eye, ear);
  return outer;
}

// Updates a `spoken` span in place (clocks tick without redrawing the board).
export function respeak(node, shown, said) {
  const eye = node.querySelector(".shown");
  const ear = node.querySelector(".sr-only");
  if (eye && eye.textContent !== shown) eye.textContent = shown;
  if (ear && ear.textContent !== said) ear.textContent = said;
}
