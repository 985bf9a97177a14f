// What the browser keeps (localStorage): the practice hand of this device and its last ten
// results (RULES.md §9), and the player's table preferences (the log panel, sound, waits
// help). The session and the language have their own keys (api.js, i18n.js).
const PRACTICE = "mp.practice";
const RESULTS = "mp.results";
const PREFS = "mp.prefs";

function read(key, fallback) {
  try {
    const v = JSON.parse(localStorage.getItem(key) || "null");
    return v === null ? fallback : v;
  } catch {
    return fallback;
  }
}

export function practiceState() {
  return read(PRACTICE, null);
}

export function savePractice(practice) {
  if (practice) localStorage.setItem(PRACTICE, JSON.stringify(practice));
}

export function practiceResults() {
  return read(RESULTS, []);
}

export function saveResult(result) {
  const results = practiceResults().filter((r) => r.hand_id !== result.hand_id);
  results.unshift(result);
  localStorage.setItem(RESULTS, JSON.stringify(results.slice(0, 10)));
}

// Preferences: {logOpen, muted, waitsHelp, quickComputers}; unset ones are absent.
export function prefs() {
  const p = read(PREFS, {});
  return p && typeof p === "object" ? p : {};
}

export function setPref(name, value) {
  localStorage.setItem(PREFS, JSON.stringify({ ...prefs(), [name]: value }));
}
