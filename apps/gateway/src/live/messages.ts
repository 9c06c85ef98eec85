import type { SourceStatus } from "@switchboard/discovery";
import { describeWorker, type WorkerChange, type WorkerView } from "@switchboard/fleet";

/** A worker as the live stream carries it: the /workers shape plus its last journal entry. */
export type LiveWorker = ReturnType<typeof describeWorker> & {
  journal: { seq: number; at: string; kind: string; message: string } | null;
};

export type LiveEventKind = "added" | "removed" | "status" | "restarted" | "probe" | "models" | "identity" | "drain" | "passive" | "update" | "source";

/** One line of the event log. */
export interface LiveEvent {
  at: number;
  kind: LiveEventKind;
  /** Worker id; the source name for kind "source". */
  worker: string;
  url: string;
  from?: string | null;
  to?: string | null;
  message: string;
}

export interface LiveSnapshot {
  seq: number;
  at: number;
  workers: LiveWorker[];
  sources: SourceStatus[];
  /** The latest events, oldest first, so a page opened now has a log. */
  events: LiveEvent[];
}

/** Changes since the previous message: each changed worker once, with its latest state. */
export interface LiveDelta {
  seq: number;
  at: number;
  workers: LiveWorker[];
  removed: string[];
  /** Present only when some source's status changed; then the whole list. */
  sources?: SourceStatus[];
  events: LiveEvent[];
  /** Events left out of this delta because too many came at once. */
  dropped?: number;
}

export function liveWorker(v: WorkerView): LiveWorker {
  const j = v.journal;
  return { ...describeWorker(v), journal: j && { seq: j.seq, at: new Date(j.at).toISOString(), kind: j.kind, message: j.message } };
}

/**
 * The log line a change deserves, if any. Transitions are logged as status changes (with from and
 * to), so the journal's own "→ ready" entry would only repeat them; probes that changed nothing
 * update the worker's row but are not news.
 */
export function eventOf(c: WorkerChange, now = Date.now()): LiveEvent | null {
  const v = c.view;
  const base = { at: now, worker: v.id, url: v.url };
  switch (c.kind) {
    case "added":
      return { ...base, kind: "added", message: `added by ${v.spec.source}` };
    case "removed":
      return { ...base, kind: "removed", message: "removed from the fleet" };
    case "status":
      return { ...base, kind: "status", from: c.from, to: c.to, message: `${c.from} → ${c.to}: ${v.reason}` };
    case "restarted":
      return { ...base, kind: "restarted", from: c.from, to: c.to, message: `engine restarted in place (engine id ${v.engineId ?? "none"})` };
    case "journal": {
      const j = v.journal;
      if (!j || j.kind === "transition") return null;
      // A restart is already logged from its own change.
      if (j.kind === "restart") return null;
      return { ...base, at: j.at, kind: j.kind, message: j.message };
    }
    case "probed":
      return null;
  }
}

export function sourceEvent(s: SourceStatus, before: SourceStatus | undefined, now = Date.now()): LiveEvent | null {
  if (before && before.connected === s.connected && before.lastError === s.lastError && before.workers === s.workers && before.reconnects === s.reconnects) return null;
  const state = s.connected ? "connected" : `disconnected${s.lastError ? `: ${s.lastError}` : ""}`;
  return { at: now, kind: "source", worker: s.source, url: s.source, message: `${s.kind} source ${state}, ${s.workers} workers` };
}
