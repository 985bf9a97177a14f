// The message catalogue: one JSON file per language in /i18n/, keys shared by all. The
// language comes from the browser, can be switched in the header and is remembered.
// `t(key, params)` fills {placeholders}; a missing key shows the key itself (and is logged).
const SUPPORTED = ["en", "de"];
let messages = {};
let fallback = {};
let lang = "en";

export function currentLanguage() {
  return lang;
}

export function chooseLanguage() {
  const saved = localStorage.getItem("mp.lang");
  if (saved && SUPPORTED.includes(saved)) return saved;
  for (const l of navigator.languages || [navigator.language || "en"]) {
    const short = String(l).slice(0, 2).toLowerCase();
    if (SUPPORTED.includes(short)) return short;
  }
  return "en";
}

async function load(l) {
  const r = await fetch(`/i18n/${l}.json`);
  return r.ok ? r.json() : {};
}

export async function setLanguage(l) {
  lang = SUPPORTED.includes(l) ? l : "en";
  localStorage.setItem("mp.lang", lang);
  if (!Object.keys(fallback).length) fallback = await load("en");
  messages = lang === "en" ? fallback : await load(lang);
  document.documentElement.lang = lang;
  translatePage(document);
}

export function t(key, params = {}) {
  let text = messages[key] ?? fallback[key];
  if (text === undefined) {
    console.warn("missing message", key);
    return key;
  }
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

export function has(key) {
  return key in messages || key in fallback;
}

// Elements with data-i18n get their text; data-i18n-label their aria-label; data-i18n-title
// their title; data-i18n-placeholder their placeholder.
export function translatePage(root) {
  root.querySelectorAll("[data-i18n]").forEach((n) => (n.textContent = t(n.dataset.i18n)));
  root.querySelectorAll("[data-i18n-label]").forEach((n) => n.setAttribute("aria-label", t(n.dataset.i18nLabel)));
  root.querySelectorAll("[data-i18n-title]").forEach((n) => n.setAttribute("title", t(n.dataset.i18nTitle)));
  root
    .querySelectorAll("[data-i18n-placeholder]")
    .forEach((n) => n.setAttribute("placeholder", t(n.dataset.i18nPlaceholder)));
}

// A server error or rejection: its stable code, translated with its params; the English
// reason only when the catalogue has no text for the code.
export function serverMessage(code, params = {}, reason = "") {
  const k = `error.${code}`;
  return has(k) ? t(k, params) : reason || code;
}
