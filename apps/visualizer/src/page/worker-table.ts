import { el, setText } from "./dom";
import { ago, shortId, STATUS_LABEL } from "./format";
import type { LiveWorker, Status } from "./wire";

export const ROW_HEIGHT = 28;
const OVERSCAN = 6;

export const COLUMNS = ["URL", "Status", "Models", "Engine id", "Load", "Source", "Since", "Why", "Last event"] as const;

export type SortKey = "url" | "status" | "since";

const STATUS_ORDER: Record<Status, number> = { failed: 0, not_ready: 1, pending: 2, draining: 3, ready: 4 };

/** The filtered, sorted list the table shows. */
export function visibleWorkers(all: Iterable<LiveWorker>, filter: string, status: Status | null, sort: SortKey): LiveWorker[] {
  const q = filter.trim().toLowerCase();
  const out: LiveWorker[] = [];
  for (const w of all) {
    if (status && w.status !== status) continue;
    if (q && !matches(w, q)) continue;
    out.push(w);
  }
  const byUrl = (a: LiveWorker, b: LiveWorker) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
  if (sort === "url") out.sort(byUrl);
  else if (sort === "status") out.sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || byUrl(a, b));
  else out.sort((a, b) => Date.parse(b.since) - Date.parse(a.since) || byUrl(a, b));
  return out;
}

function matches(w: LiveWorker, q: string): boolean {
  return (
    w.url.toLowerCase().includes(q) ||
    w.status.includes(q) ||
    w.source.toLowerCase().includes(q) ||
    (w.engine_id ?? "").toLowerCase().includes(q) ||
    w.models.some((m) => m.id.toLowerCase().includes(q)) ||
    w.reason.toLowerCase().includes(q)
  );
}

interface RowEl {
  root: HTMLDivElement;
  cells: HTMLSpanElement[];
  status: HTMLSpanElement;
}

/**
 * Only the rows in view exist in the DOM (plus a few either side); they are reused as the list
 * scrolls, so 1,000 or 10,000 workers cost the same per frame.
 */
export class WorkerTable {
  private rows: LiveWorker[] = [];
  private readonly pool: RowEl[] = [];
  private readonly spacer: HTMLDivElement;
  private selected: string | null = null;

  constructor(
    private readonly viewport: HTMLElement,
    private readonly onSelect: (id: string) => void,
    private readonly onScroll: () => void,
  ) {
    this.spacer = el("div", { class: "spacer" });
    viewport.replaceChildren(this.spacer);
    viewport.addEventListener("scroll", () => this.onScroll(), { passive: true });
    viewport.addEventListener("click", (ev) => {
      const row = (ev.target as HTMLElement).closest<HTMLElement>(".row");
      if (row?.dataset.id) this.onSelect(row.dataset.id);
    });
  }

  setRows(rows: LiveWorker[], selected: string | null) {
    this.rows = rows;
    this.selected = selected;
    this.spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
  }

  private makeRow(): RowEl {
    const cells = COLUMNS.map((c) => el("span", { class: `cell c-${c.toLowerCase().replace(/\s+/g, "-")}` }));
    const status = el("span", { class: "pill" });
    cells[1]!.append(status);
    const root = el("div", { class: "row", role: "row" }, ...cells);
    this.spacer.append(root);
    return { root, cells, status };
  }

  /** Draws the rows in view. Cheap: called on every frame that has changes, and on scroll. */
  render(now = Date.now()) {
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const needed = Math.max(0, last - first);
    while (this.pool.length < needed) this.pool.push(this.makeRow());
    for (let i = 0; i < this.pool.length; i++) {
      const r = this.pool[i]!;
      const w = i < needed ? this.rows[first + i] : undefined;
      if (!w) {
        if (!r.root.hidden) {
          r.root.hidden = true;
          // A spare row must not still claim to be the worker it last showed.
          delete r.root.dataset.id;
          delete r.root.dataset.url;
          delete r.root.dataset.status;
        }
        continue;
      }
      r.root.hidden = false;
      r.root.style.transform = `translateY(${(first + i) * ROW_HEIGHT}px)`;
      this.fill(r, w, now);
    }
  }

  private fill(r: RowEl, w: LiveWorker, now: number) {
    const d = r.root.dataset;
    if (d.id !== w.id) d.id = w.id;
    if (d.url !== w.url) d.url = w.url;
    if (d.status !== w.status) d.status = w.status;
    r.root.classList.toggle("selected", w.id === this.selected);
    const [url, , models, engine, load, source, since, why, last] = r.cells;
    setText(url!, w.url);
    setText(r.status, STATUS_LABEL[w.status] ?? w.status);
    if (r.status.dataset.status !== w.status) r.status.dataset.status = w.status;
    setText(models!, w.models.map((m) => m.id).join(", ") || "—");
    setText(engine!, shortId(w.engine_id, 14));
    // In flight from this gateway; with the engine's own numbers when the gateway scrapes them.
    setText(load!, w.engine_load ? `${w.load} · ${w.engine_load.running}r ${w.engine_load.waiting}w` : String(w.load));
    setText(source!, w.source);
    setText(since!, ago(w.since, now));
    setText(why!, w.reason);
    setText(last!, w.journal ? w.journal.message : "—");
    if (url!.title !== w.url) url!.title = w.url;
    if (why!.title !== w.reason) why!.title = w.reason;
  }

  /** Rows currently in the DOM (for the tests' "is it virtualised" check). */
  get domRows(): number {
    return this.pool.length;
  }
}
