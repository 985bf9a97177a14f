// REST calls with the session token; the token lives in localStorage ("mp.session").
export class ApiError extends Error {
  constructor(status, body) {
    super(body.reason || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || "http_error";
    this.params = body.params || {};
  }
}

export function session() {
  try {
    return JSON.parse(localStorage.getItem("mp.session") || "null");
  } catch {
    return null;
  }
}

export function saveSession(s) {
  if (s) localStorage.setItem("mp.session", JSON.stringify(s));
  else localStorage.removeItem("mp.session");
}

export async function api(method, path, body) {
  const headers = { accept: "application/json" };
  const s = session();
  if (s && s.token) headers.authorization = `Bearer ${s.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 204) return null;
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

// A guest session if there is none (or the stored one has expired).
export async function ensureSession() {
  const s = session();
  if (s && s.token && s.expires_ms > Date.now()) {
    try {
      const me = await api("GET", "/api/me");
      saveSession({ ...s, account: me.account });
      return me;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) throw e;
    }
  }
  const fresh = await api("POST", "/api/auth/guest");
  saveSession(fresh);
  return api("GET", "/api/me");
}

// A GET of one page of a list: its rows and the total the X-Total-Count header gives (null
// when the server sends none).
export async function apiPage(path) {
  const headers = { accept: "application/json" };
  const s = session();
  if (s && s.token) headers.authorization = `Bearer ${s.token}`;
  const r = await fetch(path, { method: "GET", headers });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, data);
  const total = r.headers.get("x-total-count");
  return { rows: data, total: total === null ? null : Number(total) };
}
