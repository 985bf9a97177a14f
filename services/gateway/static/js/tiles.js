// Tiles drawn as SVG, so they look like mahjong tiles on any system (no font needed for the
// circles and bamboo; the characters suit shows its rank and 萬). Every tile carries a
// screen-reader label such as "5 bamboo" and a small corner index (rank + suit letter), so
// suits differ by shape and text, not by colour alone.
import { listen } from "./dom.js";
import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

export const SUITS = ["m", "p", "s"];

export function tileLabel(tile) {
  if (!tile) return t("tile.hidden");
  return t(`tile.${tile[1]}`, { rank: tile[0] });
}

export function suitLabel(suit) {
  return t(`suit.${suit}`);
}

export function sortTiles(tiles) {
  return [...tiles].sort((a, b) => key(a) - key(b));
}

function key(tile) {
  return SUITS.indexOf(tile[1]) * 9 + Number(tile[0]);
}

// Pip layouts on a 60×80 face: [x, y] centres.
const DOTS = {
  1: [[30, 42]],
  2: [[30, 24], [30, 60]],
  3: [[16, 20], [30, 42], [44, 64]],
  4: [[18, 24], [42, 24], [18, 60], [42, 60]],
  5: [[17, 20], [43, 20], [30, 42], [17, 64], [43, 64]],
  6: [[18, 18], [42, 18], [18, 42], [42, 42], [18, 66], [42, 66]],
  7: [[14, 14], [30, 22], [46, 30], [18, 50], [42, 50], [18, 68], [42, 68]],
  8: [[18, 13], [42, 13], [18, 31], [42, 31], [18, 49], [42, 49], [18, 67], [42, 67]],
  9: [[14, 16], [30, 16], [46, 16], [14, 42], [30, 42], [46, 42], [14, 68], [30, 68], [46, 68]],
};
const DOT_R = { 1: 16, 2: 11, 3: 9, 4: 9, 5: 8, 6: 8, 7: 6.5, 8: 6.5, 9: 6.5 };
const DOT_COLOURS = ["#1d5fa8", "#1f7a3a", "#b3261e"];

const STICKS = {
  2: [[30, 24], [30, 60]],
  3: [[30, 24], [18, 60], [42, 60]],
  4: [[18, 24], [42, 24], [18, 60], [42, 60]],
  5: [[16, 24], [44, 24], [30, 42], [16, 60], [44, 60]],
  6: [[14, 24], [30, 24], [46, 24], [14, 60], [30, 60], [46, 60]],
  7: [[30, 16], [14, 44], [30, 44], [46, 44], [14, 68], [30, 68], [46, 68]],
  8: [[12, 24], [24, 24], [36, 24], [48, 24], [12, 60], [24, 60], [36, 60], [48, 60]],
  9: [[14, 16], [30, 16], [46, 16], [14, 42], [30, 42], [46, 42], [14, 68], [30, 68], [46, 68]],
};

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function face(tile) {
  const svg = el("svg", { viewBox: "0 0 60 80", "aria-hidden": "true", focusable: "false", "data-face": tile });
  el("rect", { x: 1, y: 1, width: 58, height: 78, rx: 7, class: "tile-face" }, svg);
  const rank = Number(tile[0]);
  const suit = tile[1];
  // The pips sit a little inside the face, clear of the corner index.
  const art = el("g", { transform: "translate(4.5 6) scale(0.85)" }, svg);
  if (suit === "p") {
    DOTS[rank].forEach(([x, y], i) => {
      const colour = rank === 1 ? DOT_COLOURS[2] : DOT_COLOURS[(i + rank) % 3];
      const r = DOT_R[rank];
      el("circle", { cx: x, cy: y, r, fill: "none", stroke: colour, "stroke-width": r / 3 }, art);
      el("circle", { cx: x, cy: y, r: r / 3, fill: colour }, art);
    });
  } else if (suit === "s") {
    if (rank === 1) {
      // One bamboo: a bird-like emblem, as on real tiles.
      el("ellipse", { cx: 30, cy: 46, rx: 13, ry: 18, fill: "#1f7a3a" }, art);
      el("circle", { cx: 30, cy: 24, r: 8, fill: "#b3261e" }, art);
      el("path", { d: "M30 58 L18 74 M30 58 L42 74", stroke: "#1f7a3a", "stroke-width": 4 }, art);
      el("circle", { cx: 27, cy: 22, r: 2, fill: "#fff" }, art);
    } else {
      STICKS[rank].forEach(([x, y], i) => {
        const red = (rank === 5 && i === 2) || (rank === 7 && i === 0) || (rank === 9 && i % 3 === 1);
        const colour = red ? "#b3261e" : "#1f7a3a";
        el("rect", { x: x - 3.5, y: y - 11, width: 7, height: 22, rx: 3.5, fill: colour }, art);
        el("line", { x1: x - 3.5, y1: y, x2: x + 3.5, y2: y, stroke: "#fdf8ec", "stroke-width": 1.4 }, art);
      });
    }
  } else {
    const numeral = el("text", { x: 30, y: 38, class: "tile-numeral" }, art);
    numeral.textContent = String(rank);
    const wan = el("text", { x: 30, y: 70, class: "tile-wan" }, art);
    wan.textContent = "萬";
  }
  const corner = el("text", { x: 4, y: 11, class: `tile-corner corner-${suit}` }, svg);
  corner.textContent = `${rank}${suit}`;
  return svg;
}

// A tile element: a <button> when `onClick` is given (focusable, keyboard-usable), else a
// <span role="img">. Hidden tiles (no `tile`) show the back. `decorative`: the tile is one of
// a group that has its own label (13 concealed tiles), so it is hidden from screen readers.
// `pressed` (true/false): a toggle (choosing the three tiles to exchange).
export function tileElement(tile, { onClick, small = false, extraClass = "", label, decorative = false, pressed } = {}) {
  const node = document.createElement(onClick ? "button" : "span");
  node.className = `tile ${small ? "tile-small" : ""} ${tile ? `suit-${tile[1]}` : "tile-back"} ${extraClass}`;
  if (decorative) {
    node.setAttribute("aria-hidden", "true");
  } else {
    node.setAttribute("aria-label", label || tileLabel(tile));
    if (!onClick) node.setAttribute("role", "img");
  }
  if (tile) {
    node.appendChild(face(tile));
    node.dataset.tile = tile;
  } else {
    const svg = el("svg", { viewBox: "0 0 60 80", "aria-hidden": "true", focusable: "false", "data-face": "back", preserveAspectRatio: "none" });
    el("rect", { x: 1, y: 1, width: 58, height: 78, rx: 7, class: "tile-back-face" }, svg);
    node.appendChild(svg);
  }
  if (onClick) {
    node.type = "button";
    if (pressed !== undefined) node.setAttribute("aria-pressed", pressed ? "true" : "false");
    listen(node, "click", onClick);
  }
  return node;
}
