// Building and updating the page. `h` builds an element; `morph(root, children)` makes the
// children of `root` look like `children` (freshly built, never shown) while keeping the
// nodes that are already on the page: the focused tile stays focused, an open dialog stays
// open, a tile that has not moved keeps running its animation, a scrolled list keeps its place.
//
// Why not a library: the views are already written as functions that build DOM with `h`
// (with their screen-reader labels, `lang` spans and keyboard handling); a keyed morph of
// ~120 lines keeps all of that as it is, with no dependency to vendor or pin.
//
// Children are matched by key (`data-key`, `id`, `data-part`, `data-action`), else in order
// by tag. Event handlers given to `h` as `on…` live in `node.__on` and are moved over by
// `morph`, so a kept node calls the new closure.
import { setText } from "./i18n.js";

// Adds (or replaces) the handler of `type` on `node`; one real listener per type.
export function listen(node, type, fn) {
  if (!node.__on) node.__on = {};
  if (!(type in node.__on)) node.addEventListener(type, (e) => node.__on[type] && node.__on[type](e));
  node.__on[type] = fn;
}

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") setText(node, v);
    else if (k.startsWith("on")) listen(node, k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "value") {
      node.value = v;
      node.setAttribute("value", v);
    } else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

function keyOf(node) {
  if (node.nodeType !== 1) return null;
  const d = node.dataset;
  if (d && d.key) return `k:${d.key}`;
  if (node.id) return `i:${node.id}`;
  if (d && d.part) return `p:${d.part}`;
  // A button is what it does: a focused Close never turns into Play again.
  if (d && d.action) return `a:${d.action}`;
  return null;
}

// Attributes that the page owns once shown (a dialog opened with showModal, a details
// element the player opened or closed are followed through their own handlers).
const OWNED = { DIALOG: ["open"] };

function syncAttributes(from, to) {
  const owned = OWNED[from.nodeName] || [];
  for (const a of [...from.attributes]) {
    if (!to.hasAttribute(a.name) && !owned.includes(a.name)) from.removeAttribute(a.name);
  }
  for (const a of [...to.attributes]) {
    if (owned.includes(a.name)) continue;
    if (from.getAttribute(a.name) !== a.value) from.setAttribute(a.name, a.value);
  }
  if ("value" in to && from.nodeName === "INPUT" && from !== document.activeElement && from.value !== to.value) from.value = to.value;
  if (from.nodeName === "DETAILS") from.open = to.hasAttribute("open");
  if (to.__on) for (const [type, fn] of Object.entries(to.__on)) listen(from, type, fn);
  if (from.__on) for (const type of Object.keys(from.__on)) if (!to.__on || !(type in to.__on)) from.__on[type] = null;
}

function same(a, b) {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  // A tile's face is its tile: another tile is another picture.
  if (a.nodeType === 1 && a.dataset && b.dataset && a.dataset.face !== b.dataset.face) return false;
  return true;
}

// Makes `from` look like `to`; `from` stays in the page.
export function morphNode(from, to) {
  if (from.nodeType === 3 || from.nodeType === 8) {
    if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
    return from;
  }
  syncAttributes(from, to);
  morphChildren(from, [...to.childNodes]);
  return from;
}

export function morphChildren(parent, wanted) {
  const old = [...parent.childNodes];
  const keyed = new Map();
  for (const n of old) {
    const k = keyOf(n);
    if (k && !keyed.has(k)) keyed.set(k, n);
  }
  const used = new Set();
  let cursor = 0; // the next unkeyed old node to consider, in order
  const next = (want) => {
    while (cursor < old.length) {
      const n = old[cursor];
      if (used.has(n) || keyOf(n)) {
        cursor++;
        continue;
      }
      if (same(n, want)) {
        cursor++;
        return n;
      }
      return null; // a different kind of node here: build the new one
    }
    return null;
  };
  wanted.forEach((want, i) => {
    const k = keyOf(want);
    let match = k ? keyed.get(k) : next(want);
    if (match && (used.has(match) || !same(match, want))) match = null;
    let node;
    if (match) {
      used.add(match);
      node = morphNode(match, want);
    } else {
      node = want;
    }
    const here = parent.childNodes[i];
    if (here !== node) parent.insertBefore(node, here || null);
  });
  for (const n of old) if (!used.has(n) && n.parentNode === parent) n.remove();
  // Dialogs drawn open: opened as modal dialogs (focus moves in, the page behind is inert).
  return parent;
}

// The children of `root` become `children` (an array of nodes), in place.
export function morph(root, children) {
  morphChildren(root, children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return root;
}
