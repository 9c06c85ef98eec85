import { el } from "./dom";
import { ago, clock, STATUS_LABEL } from "./format";
import type { Store } from "./store";
import type { LiveEvent } from "./wire";

function field(name: string, value: string | Node): HTMLElement[] {
  return [el("dt", {}, name), el("dd", {}, value)];
}

/** Newest first, with a run of the same line (probe after failed probe) shown once and counted. */
function collapse(events: readonly LiveEvent[]): Array<{ e: LiveEvent; n: number }> {
  const out: Array<{ e: LiveEvent; n: number }> = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const last = out[out.length - 1];
    if (last && last.e.kind === e.kind && last.e.message === e.message) last.n++;
    else out.push({ e, n: 1 });
  }
  return out;
}

/** One worker: everything known about it now, and its own history (kept by the page, bounded). */
export function renderDetail(panel: HTMLElement, store: Store, now = Date.now()) {
  const id = store.selected;
  const found = id ? store.worker(id) : null;
  if (!id || !found) {
    panel.dataset.id = "";
    panel.replaceChildren(el("p", { class: "hint" }, "Click a worker (in the table or the log) to see its history."));
    return;
  }
  const { worker: w, gone } = found;
  panel.dataset.id = w.id;
  const close = el("button", { class: "close", title: "close" }, "×");
  close.addEventListener("click", () => store.select(null));
  const probe = w.last_probe;
  const e = w.engine_load;
  const load = e ? ` · engine: ${e.running} running, ${e.waiting} waiting, KV cache ${Math.round(e.kvUsage * 100)}%` : "";
  const facts = el(
    "dl",
    {},
    ...field("id", w.id),
    ...field("status", el("span", { class: "pill", "data-status": gone ? "gone" : w.status }, gone ? "removed" : (STATUS_LABEL[w.status] ?? w.status))),
    ...field("why", `${w.reason} (since ${ago(w.since, now)})`),
    ...field("last probe", probe ? `${probe.healthy ? "healthy" : "unhealthy"}: ${probe.detail} · ${Math.round(probe.latencyMs)} ms · ${ago(probe.at, now)}` : "none yet"),
    ...field("models", w.models.map((m) => (m.parent ? `${m.id} (LoRA of ${m.parent})` : m.id)).join(", ") || "—"),
    ...field("engine id", `${w.engine_id ?? "none"}${w.engine_id && !w.engine_id_confirmed ? " (unconfirmed)" : ""}`),
    ...field("incarnation", `${w.incarnation ?? "—"} · ${w.restarts} restart${w.restarts === 1 ? "" : "s"}`),
    ...field("role", `${w.worker_type} over ${w.connection_mode}${w.sleeping ? " · sleeping" : ""}`),
    ...field("load", `${w.load} in flight here${load}`),
    ...field("source", `${w.source} (${w.source_key})`),
    ...field("labels", Object.entries(w.labels).map(([k, v]) => `${k}=${v}`).join(", ") || "—"),
    ...field("priority", String(w.priority)),
  );
  const history = collapse(store.historyOf(w.id));
  const list = el(
    "ol",
    { class: "history" },
    ...history.map(({ e, n }) =>
      el("li", { class: `kind-${e.kind}${e.to ? ` to-${e.to}` : ""}`, "data-kind": e.kind }, el("time", {}, clock(e.at)), el("span", { class: "kind" }, e.kind), el("span", { class: "msg" }, n > 1 ? `${e.message} (×${n})` : e.message)),
    ),
  );
  panel.replaceChildren(
    el("header", {}, el("h3", { title: w.url }, w.url), close),
    facts,
    el("h4", {}, `History, newest first (${store.historyOf(w.id).length} events)`),
    history.length ? list : el("p", { class: "hint" }, "Nothing has happened to this worker since the page opened."),
  );
}
