// Keyboard play at the table (docs/accessibility.md): the hand is one tab stop, ←/→/Home/End
// move over its tiles (and over the action buttons when one has focus), Enter/Space discards
// (or, in the exchange, selects) the focused tile; D discards the drawn tile; E passes the
// three selected; 1/2/3 declare the missing suit; H hu, P pung, K kong, N or Esc pass; L shows
// or hides the log; ? opens the key list. Every action button shows its key.

// The keys, in the order the help lists them: [key shown, catalogue key].
export const KEY_HELP = [
  ["← →", "keys.move"],
  ["Home End", "keys.ends"],
  ["Enter", "keys.enter"],
  ["D", "keys.drawn"],
  ["E", "keys.exchange"],
  ["1 2 3", "keys.missing"],
  ["H", "keys.hu"],
  ["P", "keys.pung"],
  ["K", "keys.kong"],
  ["N Esc", "keys.pass"],
  ["L", "keys.log"],
  ["?", "keys.help"],
];

// Handles a keydown on the table page. `table`: {root, legal(), handTiles(), focusHand(),
// toggleHelp(), toggleLog()}.
export function tableKey(e, table) {
  if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (document.querySelector("dialog[open]")) return; // the dialog has the keyboard
  const root = table.root;
  const legal = table.legal();
  const find = (type) => legal.find((c) => c.type === type);
  const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  const press = (sel) => {
    const b = root.querySelector(sel);
    if (b && !b.disabled) {
      e.preventDefault();
      b.click();
      return true;
    }
    return false;
  };
  const active = document.activeElement;
  if (["ArrowLeft", "ArrowRight", "Home", "End", "ArrowUp", "ArrowDown"].includes(k)) {
    if (active && active.closest && active.closest(".side")) return; // the log scrolls
    const inActions = active && active.closest && active.closest(".actions");
    const group = inActions ? [...root.querySelectorAll(".actions button:not([disabled])")] : table.handTiles();
    if (!group.length) return;
    const at = group.indexOf(active);
    if (at < 0 && !inActions) {
      if (k === "ArrowUp" || k === "ArrowDown") return; // leave page scrolling alone
      e.preventDefault();
      table.focusHand();
      return;
    }
    let next = at;
    if (k === "Home") next = 0;
    else if (k === "End") next = group.length - 1;
    else if (k === "ArrowRight" || k === "ArrowDown") next = (at + 1) % group.length;
    else next = (at - 1 + group.length) % group.length;
    e.preventDefault();
    group[next].focus();
    return;
  }
  if (k === "?") {
    e.preventDefault();
    table.toggleHelp();
    return;
  }
  if (k === "l") {
    e.preventDefault();
    table.toggleLog();
    return;
  }
  if (k === "h" && find("hu")) press('[data-action="hu"]');
  else if (k === "p" && find("pung")) press('[data-action="pung"]');
  else if (k === "k") press('[data-action="claim_kong"], [data-action="kong"]');
  else if ((k === "n" || k === "Escape") && find("pass")) press('[data-action="pass"]');
  else if (k === "e") press('[data-action="exchange"]');
  else if (k === "d") press(".my-hand button.tile.drawn.legal");
  else if (["1", "2", "3"].includes(k) && find("declare_missing")) press(`[data-action="missing-${"mps"[Number(k) - 1]}"]`);
}
