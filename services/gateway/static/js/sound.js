// Table sounds, made in the browser with the Web Audio API (no sound files): a click for a
// discard, two notes for a claim, a rising chord for a win, a soft ping when it is the
// player's turn, a short beep when time runs low. Muting is remembered (storage.js prefs).
// Browsers allow sound only after the player has touched the page; until then it is silent.
import { prefs, setPref } from "./storage.js";

let ctx = null;

function audio() {
  if (ctx) return ctx;
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  try {
    ctx = new Ctx();
  } catch {
    ctx = null;
  }
  return ctx;
}

// The first touch or key press unlocks sound.
for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => {
    const c = audio();
    if (c && c.state === "suspended") c.resume().catch(() => {});
  }, { passive: true });
}

export function muted() {
  return Boolean(prefs().muted);
}

export function setMuted(value) {
  setPref("muted", Boolean(value));
}

function tone(c, { freq, start = 0, length = 0.12, type = "sine", gain = 0.08 }) {
  const osc = c.createOscillator();
  const g = c.createGain();
  osc.type = type;
  osc.frequency.value = freq;
  const t0 = c.currentTime + start;
  g.gain.setValueAtTime(0.0001, t0);
  g.gain.exponentialRampToValueAtTime(gain, t0 + 0.01);
  g.gain.exponentialRampToValueAtTime(0.0001, t0 + length);
  osc.connect(g).connect(c.destination);
  osc.start(t0);
  osc.stop(t0 + length + 0.02);
}

const SOUNDS = {
  discard: [{ freq: 1400, length: 0.05, type: "triangle", gain: 0.06 }, { freq: 700, start: 0.01, length: 0.06, type: "triangle", gain: 0.04 }],
  claim: [{ freq: 523, length: 0.14 }, { freq: 784, start: 0.12, length: 0.2 }],
  win: [{ freq: 523, length: 0.3 }, { freq: 659, start: 0.1, length: 0.3 }, { freq: 784, start: 0.2, length: 0.35 }, { freq: 1047, start: 0.3, length: 0.5 }],
  turn: [{ freq: 880, length: 0.18, gain: 0.05 }],
  low: [{ freq: 988, length: 0.08, type: "square", gain: 0.03 }, { freq: 988, start: 0.16, length: 0.08, type: "square", gain: 0.03 }],
};

export function play(name) {
  if (muted() || !SOUNDS[name]) return;
  const c = audio();
  if (!c || c.state !== "running") return;
  for (const note of SOUNDS[name]) tone(c, note);
}
