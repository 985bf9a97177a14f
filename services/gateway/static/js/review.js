// The computer review in the replay viewer (issue 21): ask for it, wait for it, then show
// each reviewed decision's mark on its step (in the step line, on the board's seat and along
// the marks strip under the slider), the decisions of the step shown with the expert's choice,
// their options and values on demand, and each reviewed seat's accuracy. The state and what
// a step shows of it are pure: js/review-state.js.
import { api } from "./api.js";
import { h, seatName } from "./board.js";
import { fixed, signed } from "./format.js";
import { currentLanguage, serverMessage, t } from "./i18n.js";
import { MARK_SYMBOL, POLL_MS, boardMarks, decisionsByStep, initialReview, nextMarked, optionRows, polling, shownRows, summary, timeline, update } from "./review-state.js";
import { suitLabel, tileElement, tileLabel } from "./tiles.js";

function reviewUrl(handId) {
  return `/api/hands/${encodeURIComponent(handId)}/review`;
}

// A mark as a badge: its symbol, coloured, and its word for screen readers and the tooltip.
export function markBadge(mark, { withWord = false } = {}) {
  const word = t(`review.mark.${mark}`);
  return h(
    "span",
    { class: `review-mark mark-${mark}`, title: word, dataset: { mark } },
    h("span", { "aria-hidden": "true", text: MARK_SYMBOL[mark] }),
    h("span", { class: withWord ? "review-mark-word" : "sr-only", text: word }),
  );
}

// A command in words ("Discard 5 bamboo"), with the tile drawn beside it where it has one.
function commandText(c) {
  switch (c.type) {
    case "discard":
    case "kong":
      return t(`review.option.${c.type}`, { tile: tileLabel(c.tile) });
    case "choose_exchange":
      return t("review.option.choose_exchange", { tiles: c.tiles.map(tileLabel).join(", ") });
    case "declare_missing":
      return t("review.option.declare_missing", { suit: suitLabel(c.suit) });
    default:
      return t(`review.option.${c.type}`);
  }
}

// `short`: a discard by its tile alone (the options table, where every row is one).
function commandNode(c, { short = false } = {}) {
  const tiles = c.tile ? [c.tile] : c.tiles || [];
  const text = short && c.type === "discard" ? tileLabel(c.tile) : commandText(c);
  return h("span", { class: "review-command" }, ...tiles.map((x) => tileElement(x, { small: true, decorative: true })), h("span", { text }));
}

// The review's part of the replay page. `canAsk`: the viewer played the hand (only its
// players may ask). `onJump(at)`: show step `at`. `changed()`: the marks changed (redraw).
export function reviewPanel({ handId, canAsk, onJump, changed }) {
  let state = initialReview();
  let timer = null;
  let steps = [];
  let byStep = new Map();
  let marks = [];
  let ctx = { view: null, names: {}, at: 0 };
  const lang = currentLanguage();
  const node = h("section", { class: "card review", "aria-labelledby": "review-title", dataset: { testid: "review" } });
  const strip = h("div", { class: "review-timeline", role: "group", "aria-label": t("review.timeline"), dataset: { testid: "review-timeline" } });

  const set = (next) => {
    const had = state.review;
    state = next;
    clearTimeout(timer);
    timer = polling(state) ? setTimeout(poll, POLL_MS) : null;
    if (state.review !== had) {
      byStep = decisionsByStep(state.review, steps);
      marks = timeline(byStep);
      changed();
    }
    draw();
  };
  const answer = async (method) => {
    try {
      set(update(state, { type: "answer", body: await api(method, reviewUrl(handId)) }));
    } catch (e) {
      set(update(state, { type: "refused", code: e.code, params: e.params }));
    }
  };
  const poll = () => {
    if (!document.body.contains(node)) return stop();
    answer("GET");
  };
  const stop = () => {
    clearTimeout(timer);
    timer = null;
  };
  const ask = () => {
    if (state.status !== "none") return;
    set(update(state, { type: "ui:request" }));
    answer("POST");
  };

  const summaryNode = () =>
    h(
      "ul",
      { class: "review-summary", dataset: { testid: "review-summary" } },
      ...summary(state.review).map((s) =>
        h(
          "li",
          { dataset: { seat: String(s.seat) } },
          h("span", { class: "review-seat", text: ctx.view ? seatName(ctx.view, s.seat, ctx.names) : String(s.seat) }),
          h("span", { class: "review-accuracy", dataset: { testid: "review-accuracy" }, text: t("review.accuracy", { accuracy: fixed(s.accuracy, 1, lang) }) }),
          h(
            "span",
            { class: "review-counts" },
            ...[
              ["best", s.best],
              ["inaccuracy", s.inaccuracies],
              ["mistake", s.mistakes],
              ["blunder", s.blunders],
            ].map(([mark, n]) => h("span", { class: "review-count" }, markBadge(mark), h("span", { text: String(n ?? 0) }))),
          ),
        ),
      ),
    );

  const decisionNode = (d) =>
    h(
      "li",
      { class: `review-decision mark-${d.mark}`, dataset: { testid: "review-decision", seat: String(d.seat), mark: d.mark } },
      h(
        "p",
        { class: "review-line" },
        markBadge(d.mark, { withWord: true }),
        h("span", { class: "review-who", text: ctx.view ? seatName(ctx.view, d.seat, ctx.names) : "" }),
        h("span", { class: "review-played" }, h("span", { class: "muted", text: t("review.played") }), commandNode(d.played)),
        d.mark === "best"
          ? null
          : h("span", { class: "review-best" }, h("span", { class: "muted", text: t("review.expert") }), commandNode(d.best), h("span", { class: "review-loss", text: t("review.loss", { points: fixed(d.loss, 2, lang) }) })),
      ),
      state.open ? optionsTable(d) : null,
    );

  const optionsTable = (d) => {
    const all = optionRows(d);
    const { rows } = shownRows(all, state.all);
    const more =
      shownRows(all, false).hidden > 0
        ? h("button", {
            class: "button secondary review-more",
            type: "button",
            "aria-expanded": state.all ? "true" : "false",
            dataset: { action: "review-all-options" },
            text: state.all ? t("review.few_options") : t("review.all_options", { count: all.length }),
            onclick: () => set(update(state, { type: "ui:all-options" })),
          })
        : null;
    return h("div", { class: "review-options-box" }, optionsRows(d, rows), more);
  };

  const optionsRows = (d, rows) =>
    h(
      "table",
      { class: "data review-options", dataset: { testid: "review-options" } },
      h("caption", { class: "sr-only", text: t("review.options_caption") }),
      h("thead", {}, h("tr", {}, ...["review.option", "review.value", "review.gives_up"].map((k) => h("th", { scope: "col", text: t(k) })))),
      h(
        "tbody",
        {},
        ...rows.map((r) =>
          h(
            "tr",
            { class: `${r.best ? "is-best" : ""} ${r.played ? "is-played" : ""}`, dataset: { testid: "review-option", best: String(r.best), played: String(r.played) } },
            h(
              "td",
              {},
              commandNode(r.option, { short: d.kind === "turn" && r.option.type === "discard" }),
              r.best ? h("span", { class: "badge review-choice", text: t("review.expert_choice") }) : null,
              r.played ? h("span", { class: "badge review-you", text: t("review.played_mark") }) : null,
            ),
            h("td", { class: `num ${r.screened ? "is-screened" : ""}`, title: r.screened ? t("review.screened") : undefined, text: r.screened ? `≈ ${signed(r.value, 2, lang)}` : signed(r.value, 2, lang) }),
            h("td", { class: "num", text: r.loss > 0 ? fixed(r.loss, 2, lang) : "—" }),
          ),
        ),
      ),
    );

  const drawStrip = () => {
    const total = steps.length;
    strip.hidden = state.status !== "done" || total < 2;
    if (strip.hidden) return strip.replaceChildren();
    // Placed through the style object: the page's CSP refuses style attributes.
    const placed = (node, at) => {
      node.style.left = `${(at / (total - 1)) * 100}%`;
      return node;
    };
    strip.replaceChildren(
      placed(h("span", { class: "review-now", "aria-hidden": "true" }), ctx.at),
      ...marks.map((m) =>
        placed(h("button", {
          type: "button",
          class: `review-tick mark-${m.mark} ${m.at === ctx.at ? "is-current" : ""}`,
          title: `${t("replay.position", { n: m.at + 1, total })}: ${t(`review.mark.${m.mark}`)}`,
          "aria-label": `${t("replay.position", { n: m.at + 1, total })}: ${t(`review.mark.${m.mark}`)}`,
          dataset: { testid: "review-tick", at: String(m.at), mark: m.mark },
          onclick: () => onJump(m.at),
        }), m.at),
      ),
    );
  };

  // replaceChildren would write a null child as the text "null".
  const fill = (...children) => node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  const draw = () => {
    const head = h("h2", { id: "review-title", text: t("review.title") });
    const notice = state.notice ? h("p", { class: "notice", role: "alert", text: serverMessage(state.notice.code, state.notice.params) }) : null;
    drawStrip();
    if (state.status === "loading") return fill(head, h("p", { class: "muted", text: t("table.loading") }));
    if (state.status === "none" || state.status === "requesting") {
      return fill(
        head,
        h("p", { class: "muted", text: canAsk ? t("review.offer") : t("review.none") }),
        canAsk
          ? h("button", { class: "button primary", type: "button", disabled: state.status === "requesting", dataset: { action: "review-request" }, text: t("review.request"), onclick: ask })
          : null,
        notice,
      );
    }
    if (state.status === "pending") {
      return fill(head, h("p", { class: "review-pending", role: "status", dataset: { testid: "review-pending" } }, h("span", { class: "spinner", "aria-hidden": "true" }), h("span", { text: t("review.pending") })), notice);
    }
    const here = byStep.get(ctx.at) || [];
    const hasOptions = here.some((d) => d.options.length);
    const previous = nextMarked(marks, ctx.at, -1);
    const next = nextMarked(marks, ctx.at, 1);
    fill(
      head,
      summaryNode(),
      h(
        "div",
        { class: "review-nav" },
        h("button", { class: "button secondary", type: "button", disabled: previous === null, dataset: { action: "review-previous" }, text: t("review.previous_mark"), onclick: () => previous !== null && onJump(previous) }),
        h("button", { class: "button secondary", type: "button", disabled: next === null, dataset: { action: "review-next" }, text: t("review.next_mark"), onclick: () => next !== null && onJump(next) }),
      ),
      h("h3", { class: "review-step-title", text: t("review.this_step") }),
      here.length ? h("ul", { class: "review-decisions", dataset: { testid: "review-decisions" } }, ...here.map(decisionNode)) : h("p", { class: "muted", dataset: { testid: "review-no-decision" }, text: t("review.no_decision") }),
      hasOptions
        ? h("button", {
            class: "button secondary",
            type: "button",
            "aria-expanded": state.open ? "true" : "false",
            dataset: { action: "review-options" },
            text: state.open ? t("review.hide_options") : t("review.show_options"),
            onclick: () => set(update(state, { type: "ui:options" })),
          })
        : null,
      h("p", { class: "muted review-engine", text: t("review.engine", { engine: state.review.engine }) }),
      notice,
    );
  };

  return {
    node,
    strip,
    // The replay shows step `at` of `data` (its steps, names, and the step's view).
    show(data, at) {
      if (data.steps !== steps) {
        steps = data.steps;
        byStep = decisionsByStep(state.review, steps);
        marks = timeline(byStep);
      }
      ctx = { view: data.steps[at] ? data.steps[at].view : null, names: data.names || {}, at };
      draw();
    },
    // The step's marks for the board ({seat: mark}) and for the step line ([mark, …]).
    marksAt(at) {
      const here = byStep.get(at) || [];
      return { seats: boardMarks(here), marks: here.map((d) => d.mark) };
    },
    start() {
      draw();
      answer("GET");
    },
    stop,
  };
}
