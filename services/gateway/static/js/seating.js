// Straight to the table. On every page but a table, GET /api/lobby is polled (every second
// while the player waits for Quick Play or sits at a table that has not started, else every
// 2.5 s) and the page goes to the player's table as soon as matchmaking seats them (a Quick
// Play match, a join or an invite link in another tab, "start with computers"), or the table
// is about to deal (status "starting": the deal waits for the players' clients).
//
// A page that shows a table says so in localStorage ("mp.table-tab", renewed every second):
// the other pages of this browser then leave that table to it rather than take the seat
// from it (one seat, one driver: the gateway moves the seat to the socket that opened last).
import { api } from "./api.js";

const FAST_MS = 1000;
const SLOW_MS = 2500;
const HELD = "mp.table-tab";
const HELD_FRESH_MS = 3000;

let timer = null;
let running = false;
let generation = 0; // a poll answered after the page changed is dropped
let seen; // the table id of the last answer (undefined: none yet on this page)
let listeners = new Set();
let holder = null;

// Poll while this page is no table; `onData(lobby)` gets every answer.
export function followSeat(onData) {
  if (onData) listeners.add(onData);
  if (running) return;
  running = true;
  generation += 1;
  seen = undefined;
  poll();
}

export function stopFollowing() {
  running = false;
  generation += 1;
  listeners = new Set();
  if (timer) clearTimeout(timer);
  timer = null;
}

// Ask now (after joining or leaving the queue, say) rather than at the next tick.
export async function pollNow() {
  if (running) await poll();
}

async function poll() {
  if (timer) clearTimeout(timer);
  timer = null;
  const mine = generation;
  let data = null;
  let error = null;
  try {
    data = await api("GET", "/api/lobby");
  } catch (e) {
    error = e;
  }
  if (!running || mine !== generation) return;
  if (timer) clearTimeout(timer); // pollNow() and the timer may overlap
  const waiting = data && (data.queue_since_ms || (data.table_id && ["open", "starting", undefined].includes(data.table_status)));
  timer = setTimeout(poll, waiting ? FAST_MS : SLOW_MS);
  for (const fn of listeners) fn(data, error);
  if (data) follow(data);
}

function follow(data) {
  const table = data.table_id || null;
  const first = seen === undefined;
  const moved = !first && table && table !== seen;
  seen = table;
  if (!table || heldElsewhere(table)) return;
  if (moved || data.table_status === "starting") {
    location.hash = `#/table/${encodeURIComponent(table)}`;
  }
}

// This page shows `tableId` (null: no table any more).
export function holdTable(tableId) {
  if (holder) clearInterval(holder);
  holder = null;
  if (!tableId) return;
  const mark = () => localStorage.setItem(HELD, JSON.stringify({ table_id: tableId, at: Date.now(), page: pageId }));
  mark();
  holder = setInterval(mark, 1000);
}

const pageId = Math.random().toString(36).slice(2);

function heldElsewhere(tableId) {
  try {
    const held = JSON.parse(localStorage.getItem(HELD) || "null");
    return Boolean(held && held.table_id === tableId && held.page !== pageId && Date.now() - held.at < HELD_FRESH_MS);
  } catch {
    return false;
  }
}
