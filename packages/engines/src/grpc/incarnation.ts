/**
 * An engine process's incarnation from what GetServerInfo offers: its KV engine id and its
 * start epoch (now − uptime). The epoch is measured through an RPC, so it jitters by the
 * round trip; the previous marker is kept while the epoch stays within a tolerance and the id
 * is unchanged, so jitter never reads as a restart while uptime going backwards (a start epoch
 * moving later) or a new id always does.
 */

/** Start epochs closer than this are the same process. Far above RPC jitter, far below a restart cycle. */
export const START_EPOCH_TOLERANCE_S = 3;

interface Seen {
  engineId: string;
  startEpochS: number;
  marker: string;
}

/** Our clock for "now": immune to wall-clock steps on our side while the router runs. */
const monotonicNowMs = () => performance.timeOrigin + performance.now();

export function incarnationMarker(engineId: string, startEpochS: number): string {
  return `${engineId}|${Math.floor(startEpochS)}`;
}

/** Reads a marker back (the worker's known incarnation), so a fresh tracker agrees with it. */
export function parseIncarnationMarker(marker: string): Seen | undefined {
  const bar = marker.lastIndexOf("|");
  const startEpochS = Number(marker.slice(bar + 1));
  if (bar < 0 || marker.slice(bar + 1) === "" || !Number.isFinite(startEpochS)) return undefined;
  return { engineId: marker.slice(0, bar), startEpochS, marker };
}

export class IncarnationTracker {
  private readonly seen = new Map<string, Seen>();

  /**
   * The marker for `key`'s engine as observed now. `known` (the marker the worker holds) stands
   * in for a previous observation this tracker has not made, e.g. after closeGrpcClients().
   */
  observe(key: string, engineId: string, uptimeSeconds: number, known: string | null = null, nowMs = monotonicNowMs()): string {
    const startEpochS = nowMs / 1000 - uptimeSeconds;
    const prev = this.seen.get(key) ?? (known !== null ? parseIncarnationMarker(known) : undefined);
    if (prev && prev.engineId === engineId && Math.abs(startEpochS - prev.startEpochS) <= START_EPOCH_TOLERANCE_S) {
      // Follow slow clock drift; only a jump beyond the tolerance is a new process.
      this.seen.set(key, { ...prev, startEpochS });
      return prev.marker;
    }
    const marker = incarnationMarker(engineId, startEpochS);
    this.seen.set(key, { engineId, startEpochS, marker });
    return marker;
  }

  forget(key?: string): void {
    if (key === undefined) this.seen.clear();
    else this.seen.delete(key);
  }
}
