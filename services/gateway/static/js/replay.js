// The replay viewer (#/replay/<hand>): a finished hand step by step, one step per game
// action, board first with the controls under it (within a thumb's reach on a phone):
// first, back, play/pause, forward, last, a step slider, and ←/→/Home/End. The clocks read
// what the live table showed at each step; the settlement shows at the last step only. A
// switch shows every hand open or one seat's view (the server's, RULES.md §10); a link to
// copy opens the replay for anyone signed in (a private table's: its players only).
// The computer review (js/review.js) puts each reviewed decision's mark on its step.
// The state and what a step draws are pure: js/replay-state.js.
import { api, session } from "./api.js";
import { h, renderBoard, seatName } from "./board.js";
import { serverMessage, t } from "./i18n.js";
import { exportHand } from "./pages.js";
import { PLAY_INTERVAL_MS, advance, frame, goTo, initialReplay, shareUrl, switchSeat, togglePlay } from "./replay-state.js";
import { reviewPanel } from "./review.js";
import { MARK_SYMBOL } from "./review-state.js";
import { renderSettlement } from "./settlement.js";
import { tileLabel } from "./tiles.js";

let current = null; // { keys, timer, review }

export function closeReplay() {
  if (!current) return;
  document.removeEventListener("keydown", current.keys);
  clearInterval(current.timer);
  if (current.review) current.review.stop();
  current = null;
}

function replayUrl(handId, seat) {
  return `/api/hands/${encodeURIComponent(handId)}/replay${seat === null ? "" : `?seat=${seat}`}`;
}

// What a step was, in words: "East (Computer 1) discards 5 bamboo".
function actionText(f, names) {
  const e = f.step.event;
  const who = e.seat !== undefined && e.seat !== null ? seatName(f.view, e.seat, names) : "";
  switch (f.kind) {
    case "tile_drawn":
      return e.tile ? t("replay.action.tile_drawn", { name: who, tile: tileLabel(e.tile) }) : t("replay.action.tile_drawn_hidden", { name: who });
    case "tile_discarded":
    case "punged":
    case "konged":
      return t(`replay.action.${f.kind}`, { name: who, tile: tileLabel(e.tile) });
    case "robbing_window_opened":
      return t("replay.action.robbing_window_opened", { name: seatName(f.view, e.declarer, names), tile: tileLabel(e.tile) });
    case "won":
      return t("replay.action.won", { name: who, fan: e.fan });
    case "exchange_resolved":
      return t("replay.action.exchange_resolved", { direction: t(`direction.${e.direction}`) });
    default:
      return t(`replay.action.${f.kind}`);
  }
}

export async function openReplay(root, handId) {
  closeReplay();
  const me = session() && session().account ? session().account.id : null;
  root.replaceChildren(h("h1", { text: t("replay.title") }), h("p", { text: t("table.loading") }));
  const cache = new Map(); // seat option -> replay
  const load = async (seat) => {
    if (!cache.has(seat)) cache.set(seat, await api("GET", replayUrl(handId, seat)));
    return cache.get(seat);
  };
  let data;
  try {
    data = await load(null);
  } catch (e) {
    const text = e.code === "no_such_hand" ? t("replay.unavailable") : serverMessage(e.code, e.params, e.message);
    root.replaceChildren(h("h1", { text: t("replay.title") }), h("p", { class: "notice", role: "alert", dataset: { testid: "replay-error" }, text }));
    return;
  }
  if (!data.steps.length) return;
  const players = data.steps[0].view.players.map((p) => p.player);
  const mine = players.indexOf(me);
  let state = initialReplay({ home: mine >= 0 ? mine : 0 });
  const self = { keys: null, timer: null, review: null };
  current = self;
  const review = reviewPanel({ handId, canAsk: mine >= 0, onJump: (at) => go(at), changed: () => show() });
  self.review = review;

  const board = h("div", { class: "board-wrap replay", dataset: { testid: "replay-board" } });
  const label = h("p", { class: "replay-step", role: "status", dataset: { testid: "replay-step" } });
  const action = h("span", { class: "replay-action" });
  const slider = h("input", { type: "range", min: "1", max: String(data.steps.length), value: "1", "aria-label": t("replay.step"), dataset: { testid: "replay-slider" } });
  const settlement = h("div", { class: "replay-settlement", dataset: { testid: "replay-settlement" } });
  const play = h("button", { class: "button primary replay-play", type: "button", dataset: { action: "replay-play" }, text: t("replay.play"), onclick: () => set(togglePlay(state, data)) });
  const seatSelect = h(
    "select",
    { name: "replay-seat", "aria-label": t("replay.view_as"), dataset: { testid: "replay-seat" } },
    h("option", { value: "", text: t("replay.all_open") }),
    ...players.map((_, s) => h("option", { value: String(s), text: seatName(data.steps[0].view, s, data.names) + (s === mine ? ` (${t("seat.you")})` : "") })),
  );
  const link = h("input", { class: "invite-link replay-link", readonly: true, value: shareUrl(location, handId), "aria-label": t("replay.link"), dataset: { testid: "replay-link" } });
  const copied = h("span", { class: "muted", role: "status" });
  const copy = h("button", {
    class: "button secondary",
    type: "button",
    dataset: { action: "replay-copy" },
    text: t("replay.copy_link"),
    onclick: async () => {
      link.select();
      try {
        await navigator.clipboard.writeText(link.value);
        copied.textContent = t("replay.copied");
      } catch {
        copied.textContent = t("replay.copy_manually");
      }
    },
  });

  const show = () => {
    const f = frame(data, state);
    const marked = review.marksAt(state.at);
    renderBoard(board, f.view, { me: f.bottom, replay: true, names: data.names, serverNow: f.serverNow ?? Date.now(), lastDiscard: f.lastDiscard, marks: marked.seats });
    board.dataset.view = state.seat === null ? "all" : String(state.seat); // whose view is drawn
    label.replaceChildren(h("strong", { text: t("replay.position", { n: f.n, total: f.total }) }), " ", action, ...stepMarks(marked.marks));
    action.textContent = actionText(f, data.names);
    slider.value = String(f.n);
    slider.setAttribute("aria-valuetext", `${t("replay.position", { n: f.n, total: f.total })}: ${t(`event.${f.kind}`)}`);
    play.textContent = state.playing ? t("replay.pause") : t("replay.play");
    play.setAttribute("aria-pressed", state.playing ? "true" : "false");
    settlement.replaceChildren(...(f.settlement ? [renderSettlement(f.settlement.events, data.names, state.seat ?? (mine >= 0 ? mine : null), { view: f.settlement.view })] : []));
    review.show(data, state.at);
  };
  const set = (next) => {
    state = next;
    clearInterval(self.timer);
    self.timer = state.playing
      ? setInterval(() => {
          if (!document.body.contains(board)) return closeReplay();
          set(advance(state, data));
        }, PLAY_INTERVAL_MS)
      : null;
    show();
  };
  const go = (n) => set(goTo({ ...state, playing: false }, data, n));
  slider.addEventListener("input", () => go(Number(slider.value) - 1));
  seatSelect.addEventListener("change", async () => {
    const seat = seatSelect.value === "" ? null : Number(seatSelect.value);
    try {
      const to = await load(seat);
      const from = data;
      data = to;
      set(switchSeat({ ...state, playing: false }, from, to, seat));
    } catch (e) {
      copied.textContent = serverMessage(e.code, e.params, e.message);
    }
  });
  self.keys = (e) => {
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return; // the slider steps itself
    if (e.key === "ArrowLeft") go(state.at - 1);
    else if (e.key === "ArrowRight") go(state.at + 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(data.steps.length - 1);
  };
  document.addEventListener("keydown", self.keys);

  const button = (text, labelKey, action, onclick) => h("button", { class: "button secondary", type: "button", text, "aria-label": t(labelKey), dataset: { action }, onclick });
  root.replaceChildren(
    h("h1", { class: "sr-only", text: t("replay.title") }),
    h(
      "div",
      { class: "replay-layout" },
      h(
        "div",
        { class: "replay-main" },
        label,
        board,
        h(
          "div",
          { class: "replay-bar", role: "group", "aria-label": t("replay.controls") },
          button("⇤", "replay.first", "replay-first", () => go(0)),
          button("◀", "replay.previous", "replay-previous", () => go(state.at - 1)),
          play,
          button("▶", "replay.next", "replay-next", () => go(state.at + 1)),
          button("⇥", "replay.last", "replay-last", () => go(data.steps.length - 1)),
          slider,
        ),
        review.strip,
      ),
      review.node,
    ),
    h(
      "div",
      { class: "replay-options" },
      h("label", { class: "field inline" }, h("span", { text: t("replay.view_as") }), seatSelect),
      copy,
      h("button", { class: "button secondary", type: "button", text: t("history.export"), onclick: () => exportHand(handId) }),
      link,
      copied,
      data.public ? null : h("p", { class: "muted", dataset: { testid: "replay-private" }, text: t("replay.private_note") }),
    ),
    settlement,
    h("p", { class: "fairness muted" }, h("span", { text: t("settlement.commitment_label") }), " ", h("code", { text: data.commitment || "—" }), " ", h("span", { text: t("settlement.seed_label") }), " ", h("code", { text: data.seed || "—" })),
  );
  show();
  review.start();
}

// The marks of the step's reviewed decisions, after its action in the step line.
function stepMarks(marks) {
  return marks.map((mark) => h("span", { class: `review-mark mark-${mark}`, dataset: { testid: "step-mark", mark } }, h("span", { "aria-hidden": "true", text: MARK_SYMBOL[mark] }), h("span", { class: "sr-only", text: t(`review.mark.${mark}`) })));
}

