/** "4s ago", "3m ago", "2h ago": how long since `at`. */
export function ago(at: number | string | null | undefined, now = Date.now()): string {
  if (at === null || at === undefined) return "never";
  const t = typeof at === "number" ? at : Date.parse(at);
  if (!Number.isFinite(t)) return "?";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** hh:mm:ss in local time. */
export function clock(at: number | string): string {
  const d = new Date(at);
  return d.toTimeString().slice(0, 8);
}

export function shortId(id: string | null | undefined, keep = 12): string {
  if (!id) return "—";
  return id.length > keep ? `${id.slice(0, keep)}…` : id;
}

export const STATUS_LABEL: Record<string, string> = {
  pending: "pending",
  ready: "ready",
  not_ready: "not ready",
  failed: "failed",
  draining: "draining",
};
