import { byId, el, setText } from "./dom";
import { EventLog } from "./event-log";
import { ago } from "./format";
import { renderSources } from "./sources-panel";
import { Statechart } from "./statechart";
import { Store } from "./store";
import { follow, gatewayClient, Unauthorized, type ConnectionState } from "./stream";
import { renderDetail } from "./worker-detail";
import { COLUMNS, visibleWorkers, WorkerTable, type SortKey } from "./worker-table";
import type { Status } from "./wire";

/** Where the gateway is: `?gateway=` wins, then the page's meta tag (empty = the server that served the page). */
function readConfig() {
  const params = new URLSearchParams(location.search);
  const meta = document.querySelector<HTMLMetaElement>('meta[name="switchboard-gateway"]')?.content ?? "";
  return { gateway: params.get("gateway") ?? meta, token: params.get("token") };
}

const CONNECTION_TEXT: Record<ConnectionState, string> = {
  connecting: "connecting…",
  live: "live",
  reconnecting: "reconnecting…",
  unauthorized: "unauthorized: add ?token=<admin key> to this page's address",
  unreachable: "gateway unreachable, retrying…",
};

/** Render statistics, for the scale test and for anyone curious (window.__visualizer). */
const stats = { frames: 0, maxFrameMs: 0, lastFrameMs: 0 };

function main() {
  const config = readConfig();
  const client = gatewayClient(config.gateway || location.origin, config.token);
  const store = new Store();
  let picked: Status | null = null;
  let filter = "";
  let sort: SortKey = "url";
  let chart: Statechart | null = null;
  let rowsStale = true;

  const conn = byId("conn");
  setText(byId("gateway"), config.gateway || location.origin);
  byId("table-head").replaceChildren(...COLUMNS.map((c) => el("span", { class: `cell c-${c.toLowerCase().replace(/\s+/g, "-")}` }, c)));

  const select = (id: string | null) => {
    store.select(id);
    rowsStale = true;
    invalidate();
  };
  const table = new WorkerTable(byId("table-viewport"), select, () => invalidate());
  const log = new EventLog(byId("log-list"), select);
  const pick = (s: Status | null) => {
    picked = picked === s ? null : s;
    byId<HTMLSelectElement>("status-filter").value = picked ?? "";
    rowsStale = true;
    invalidate();
  };

  byId<HTMLInputElement>("filter").addEventListener("input", (e) => {
    filter = (e.target as HTMLInputElement).value;
    rowsStale = true;
    invalidate();
  });
  byId<HTMLSelectElement>("status-filter").addEventListener("change", (e) => pick(((e.target as HTMLSelectElement).value || null) as Status | null));
  byId<HTMLInputElement>("hide-probes").addEventListener("change", (e) => byId("log-list").classList.toggle("hide-probe", (e.target as HTMLInputElement).checked));
  byId<HTMLSelectElement>("sort").addEventListener("change", (e) => {
    sort = (e.target as HTMLSelectElement).value as SortKey;
    rowsStale = true;
    invalidate();
  });

  // Everything that arrives is applied to the store at once and drawn at most once per frame.
  let frame = 0;
  let tick = false;
  function invalidate() {
    frame ||= requestAnimationFrame(render);
  }
  function render() {
    frame = 0;
    const t0 = performance.now();
    const now = Date.now();
    const dirty = store.takeDirty();
    if (dirty.workers || rowsStale) {
      const counts = store.counts();
      chart?.update(counts, picked);
      const rows = visibleWorkers(store.workers.values(), filter, picked, sort);
      table.setRows(rows, store.selected);
      setText(byId("shown"), rows.length === store.workers.size ? `${rows.length} workers` : `${rows.length} of ${store.workers.size} workers`);
      setText(byId("totals"), `${store.workers.size} workers · ${counts.ready} ready`);
      rowsStale = false;
    }
    table.render(now);
    if (dirty.events.length) log.add(dirty.events);
    if (dirty.sources || tick) renderSources(byId("sources-body"), store.sources, now);
    if (dirty.selected || tick) renderDetail(byId("detail"), store, now);
    if (store.dropped) setText(byId("dropped"), `${store.dropped} events not shown (burst)`);
    setText(byId("updated"), store.lastUpdate ? `updated ${ago(store.lastUpdate, now)}` : "");
    tick = false;
    stats.frames++;
    stats.lastFrameMs = performance.now() - t0;
    stats.maxFrameMs = Math.max(stats.maxFrameMs, stats.lastFrameMs);
  }
  // "Since" columns and relative times move on even when nothing arrives.
  setInterval(() => {
    tick = true;
    invalidate();
  }, 1000);

  const setConnection = (s: ConnectionState) => {
    conn.dataset.state = s;
    setText(conn, CONNECTION_TEXT[s]);
  };

  const start = async () => {
    try {
      const doc = await client.machine();
      chart = new Statechart(byId("chart"), doc.worker, pick);
      setText(byId("machine-name"), `${doc.worker.id} machine`);
      setText(byId("discovery-machines"), Object.keys(doc.discovery).join(", "));
    } catch (e) {
      setConnection(e instanceof Unauthorized ? "unauthorized" : "unreachable");
      setTimeout(start, 3000);
      return;
    }
    follow(client, {
      snapshot: (s) => {
        store.applySnapshot(s);
        invalidate();
      },
      delta: (d) => {
        store.applyDelta(d);
        invalidate();
      },
      state: setConnection,
    });
  };
  void start();
  (window as unknown as { __visualizer: unknown }).__visualizer = { store, stats, table };
}

main();
