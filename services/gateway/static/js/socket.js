// The table's WebSocket (protocol v1, docs/gateway.md): hello (resuming from the last event
// seen), pings every 5 s, reconnects with back-off. Every frame is handed on stamped with the
// client's clock (`now`; pongs also `perf`), so the state's update stays pure.
import { session } from "./api.js";

export const PROTOCOL = 1;

export class TableSocket {
  // `resume()`: {hand_id, last_seq} or null; `onFrame(frame)`; `onClose({code, reason})`
  // returns whether to reconnect; `onConnecting()`.
  constructor(tableId, { resume, onFrame, onClose, onConnecting }) {
    this.tableId = tableId;
    this.resume = resume;
    this.onFrameCb = onFrame;
    this.onCloseCb = onClose;
    this.onConnecting = onConnecting || (() => {});
    this.ws = null;
    this.closed = false;
    this.retry = 0;
    this.pinger = setInterval(() => this.ping(), 5000);
  }

  connect() {
    if (this.closed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    this.onConnecting();
    ws.onopen = () => {
      const s = session();
      // compact: each change of the hand comes as one `change` frame (events and the view's
      // changed fields) instead of an events frame and a whole view.
      const hello = { type: "hello", v: PROTOCOL, token: s ? s.token : "", table_id: this.tableId, compact: true };
      const r = this.resume();
      if (r) Object.assign(hello, r);
      ws.send(JSON.stringify(hello));
      this.ping();
    };
    ws.onmessage = (m) => {
      const f = JSON.parse(m.data);
      f.now = Date.now();
      if (f.type === "pong") f.perf = performance.now();
      if (f.type === "welcome") this.retry = 0;
      this.onFrameCb(f);
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return; // an old socket, replaced by "use here"
      if (this.closed) return;
      const again = this.onCloseCb({ code: e.code, reason: e.reason });
      if (!again) return;
      this.retry = Math.min(this.retry + 1, 6);
      setTimeout(() => this.connect(), 300 * 2 ** this.retry);
    };
  }

  reconnect() {
    this.retry = 0;
    this.connect();
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  ping() {
    this.send({ type: "ping", t: performance.now() });
  }

  close() {
    this.closed = true;
    clearInterval(this.pinger);
    if (this.ws) this.ws.close();
  }
}
