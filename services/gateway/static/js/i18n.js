// The message catalogues: one JSON file per language in /i18n/ (en.json, de.json), a flat
// key → message map with the same keys in each (tests/service/test_gateway_i18n.py).
// Messages take {placeholders} and ICU-style plurals, e.g.
//   "{n, plural, one {# tile} other {# tiles}}"
// The language comes from the browser (navigator.languages), can be switched in the header,
// and the switch is remembered in localStorage ("mp.lang").
export const SUPPORTED = ["en", "de"];
const STORAGE = "mp.lang";
let messages = {};
let fallback = {};
let lang = "en";
let pluralRules = new Intl.PluralRules("en");
let numberFormat = new Intl.NumberFormat("en");

export function currentLanguage() {
  return lang;
}

// The remembered choice, else the first of the browser's languages we speak, else English.
export function chooseLanguage() {
  const saved = localStorage.getItem(STORAGE);
  if (saved && SUPPORTED.includes(saved)) return saved;
  const wanted = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
  for (const l of wanted) {
    const primary = String(l).split("-")[0].toLowerCase();
    if (SUPPORTED.includes(primary)) return primary;
  }
  return "en";
}

async function load(l) {
  const r = await fetch(`/i18n/${l}.json`);
  return r.ok ? r.json() : {};
}

// `remember`: the player chose it (the header's switch), so it wins over the browser's.
export async function setLanguage(l, { remember = false } = {}) {
  lang = SUPPORTED.includes(l) ? l : "en";
  if (remember) localStorage.setItem(STORAGE, lang);
  if (!Object.keys(fallback).length) fallback = await load("en");
  messages = lang === "en" ? fallback : await load(lang);
  pluralRules = new Intl.PluralRules(lang);
  numberFormat = new Intl.NumberFormat(lang);
  document.documentElement.lang = lang;
  document.title = t("app.title");
  translatePage(document);
}

export function has(key) {
  return key in messages || key in fallback;
}

// The message for `key` with `params` filled in; a missing key shows the key (and is logged).
export function t(key, params = {}) {
  const text = messages[key] ?? fallback[key];
  if (text === undefined) {
    console.warn("missing message", key);
    return key;
  }
  return format(text, params);
}

export function formatNumber(n, options) {
  return options ? new Intl.NumberFormat(lang, options).format(n) : numberFormat.format(n);
}

// {name} and {name, plural, =0 {…} one {…} other {…}} ("#" in a branch is the number).
export function format(message, params = {}) {
  let out = "";
  let i = 0;
  while (i < message.length) {
    if (message[i] !== "{") {
      out += message[i++];
      continue;
    }
    const j = closing(message, i);
    const inner = message.slice(i + 1, j - 1);
    const m = /^\s*(\w+)\s*(?:,\s*plural\s*,([\s\S]*))?$/.exec(inner);
    if (!m) {
      out += message.slice(i, j);
    } else if (m[2] === undefined) {
      const v = params[m[1]];
      out += v === undefined || v === null ? `{${m[1]}}` : typeof v === "number" ? formatNumber(v) : String(v);
    } else {
      out += pluralOf(m[2], params[m[1]], params);
    }
    i = j;
  }
  return out;
}

function closing(text, at) {
  let depth = 0;
  for (let k = at; k < text.length; k++) {
    if (text[k] === "{") depth++;
    else if (text[k] === "}" && --depth === 0) return k + 1;
  }
  return text.length;
}

function pluralOf(spec, value, params) {
  const branches = {};
  const re = /(=\d+|zero|one|two|few|many|other)\s*\{/g;
  let m;
  while ((m = re.exec(spec))) {
    const start = m.index + m[0].length - 1;
    const end = closing(spec, start);
    branches[m[1]] = spec.slice(start + 1, end - 1);
    re.lastIndex = end;
  }
  const n = Number(value);
  const branch = branches[`=${n}`] ?? branches[pluralRules.select(n)] ?? branches.other ?? "";
  return format(branch.replace(/#/g, formatNumber(n)), params);
}

// Chinese game terms (杠, 定缺, …) inside a message are marked lang="zh-Hans", so screen
// readers switch voice for them and fonts pick CJK glyphs.
const CJK = /[\u3400-\u9fff]+/g;
const HAS_CJK = /[\u3400-\u9fff]/;

export function setText(node, text) {
  const s = text === null || text === undefined ? "" : String(text);
  if (!HAS_CJK.test(s) || ["OPTION", "TITLE", "TEXTAREA"].includes(node.nodeName)) {
    node.textContent = s;
    return node;
  }
  node.textContent = "";
  let at = 0;
  for (const m of s.matchAll(CJK)) {
    if (m.index > at) node.append(s.slice(at, m.index));
    const span = document.createElement("span");
    span.lang = "zh-Hans";
    span.textContent = m[0];
    node.append(span);
    at = m.index + m[0].length;
  }
  if (at < s.length) node.append(s.slice(at));
  return node;
}

// Elements with data-i18n get their text; data-i18n-label their aria-label; data-i18n-title
// their title; data-i18n-placeholder their placeholder.
export function translatePage(root) {
  root.querySelectorAll("[data-i18n]").forEach((n) => setText(n, t(n.dataset.i18n)));
  root.querySelectorAll("[data-i18n-label]").forEach((n) => n.setAttribute("aria-label", t(n.dataset.i18nLabel)));
  root.querySelectorAll("[data-i18n-title]").forEach((n) => n.setAttribute("title", t(n.dataset.i18nTitle)));
  root
    .querySelectorAll("[data-i18n-placeholder]")
    .forEach((n) => n.setAttribute("placeholder", t(n.dataset.i18nPlaceholder)));
}

// Parameters of server messages shown in the chosen language: tiles ("5s" → "5 Bambus"),
// suits ("p" → "Kreise").
function localParams(params) {
  const out = { ...params };
  if (typeof out.tile === "string" && /^[1-9][mps]$/.test(out.tile)) {
    out.tile = t(`tile.${out.tile[1]}`, { rank: out.tile[0] });
  }
  if (typeof out.suit === "string" && /^[mps]$/.test(out.suit)) out.suit = t(`suit.${out.suit}`);
  return out;
}

// A server error or rejection by its stable code, with its params, in the chosen language.
// Codes without a message (a newer server) get a generic message naming the code: the
// server's English reason is never shown.
export function serverMessage(code, params = {}, _reason = "") {
  const key = `error.${code || "http_error"}`;
  return has(key) ? t(key, localParams(params || {})) : t("error.unknown", { code: String(code) });
}
