import { el } from "./dom";
import { ago } from "./format";
import type { SourceStatus } from "./wire";

/** Discovery sources: which are connected, when each last synced, and what went wrong. */
export function renderSources(body: HTMLElement, sources: readonly SourceStatus[], now = Date.now()) {
  const rows = [...sources]
    .sort((a, b) => a.source.localeCompare(b.source))
    .map((s) =>
      el(
        "tr",
        { "data-source": s.source, "data-connected": String(s.connected) },
        el("td", {}, s.source),
        el("td", {}, s.kind),
        el("td", {}, el("span", { class: `dot ${s.connected ? "up" : "down"}` }), s.connected ? "connected" : "disconnected"),
        el("td", {}, s.lastSyncAt ? ago(s.lastSyncAt, now) : "never"),
        el("td", { class: "num" }, String(s.workers)),
        el("td", { class: "num" }, String(s.reconnects)),
        el("td", { class: "err", title: s.lastError ?? "" }, s.lastError ?? ""),
      ),
    );
  body.replaceChildren(...rows);
}
