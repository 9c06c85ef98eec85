import { raceAbort } from "./abort.ts";
import type { KubeClient } from "./client.ts";
import { GoneError, WatchError, asOpError, errorText } from "./errors.ts";
import { LineSplitter } from "./ndjson.ts";
import { isKubeObject, type KubeObject } from "./objects.ts";
import { errorForStatus, type KubeStatus } from "./status.ts";

export const DEFAULT_WATCH_TIMEOUT_SECONDS = 60;
export const DEFAULT_WATCH_CONNECT_TIMEOUT_MS = 10_000;

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** A line that was not a usable event (or whose handler threw); the watch goes on. */
export interface WatchSkip {
  line: string;
  reason: string;
  error?: unknown;
}

export interface WatchOptions<T> {
  /** Start after this point (the list's resourceVersion). Omitted: the server replays current objects as ADDED. */
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  /** Asks the server to end the stream normally after this long. Default 60. */
  timeoutSeconds?: number;
  /** Bound on getting response headers. Default 10 s. */
  connectTimeoutMs?: number;
  /** No bytes for this long means the stream is dead. Default 2 × timeoutSeconds. */
  idleTimeoutMs?: number;
  /** Aborting ends the watch; the promise then resolves with `ended: "aborted"`. */
  signal?: AbortSignal;
  onEvent: (event: WatchEvent<T>) => void;
  onBookmark?: (resourceVersion: string) => void;
  onSkipped?: (skip: WatchSkip) => void;
}

export interface WatchEnd {
  /** closed: the server ended the stream cleanly (its timeout). aborted: the caller's signal. */
  ended: "closed" | "aborted";
  /** Last resourceVersion seen (events and bookmarks), else the one the watch started from. */
  resourceVersion?: string;
  /** ADDED/MODIFIED/DELETED events delivered. */
  events: number;
}

type StopCause = "caller" | "connect-timeout" | "idle";

/**
 * Watches a collection (e.g. `podsPath(ns)`) and calls `onEvent` per event, in order.
 * Resolves when the stream ends cleanly or the caller aborts. Rejects with GoneError (HTTP 410
 * or an ERROR event with code 410: list again) or WatchError with reason connect | tls |
 * timeout | unauthorized | forbidden | http | error-event | dropped | idle | malformed.
 */
export async function watch<T extends KubeObject = KubeObject>(
  client: KubeClient,
  path: string,
  opts: WatchOptions<T>,
): Promise<WatchEnd> {
  const timeoutSeconds = opts.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_WATCH_CONNECT_TIMEOUT_MS;
  const idleTimeoutMs = opts.idleTimeoutMs ?? Math.max(2_000, 2 * timeoutSeconds * 1000);
  const state = { events: 0, resourceVersion: opts.resourceVersion };
  const end = (ended: WatchEnd["ended"]): WatchEnd => ({ ended, ...state });
  if (opts.signal?.aborted) return end("aborted");

  const controller = new AbortController();
  let stop: StopCause | null = null;
  const abort = (cause: StopCause) => {
    stop ??= cause;
    controller.abort();
  };
  const onCallerAbort = () => abort("caller");
  opts.signal?.addEventListener("abort", onCallerAbort, { once: true });
  let timer = setTimeout(() => abort("connect-timeout"), connectTimeoutMs);
  const stopped = (): WatchError | null => {
    if (stop === "connect-timeout") return new WatchError("watch", "timeout", `${path}: no response within ${connectTimeoutMs} ms`);
    if (stop === "idle") return new WatchError("watch", "idle", `${path}: no bytes for ${idleTimeoutMs} ms`);
    if (stop === "caller") return new WatchError("watch", "aborted", `${path}: aborted by caller`);
    return null;
  };

  try {
    let res: Response;
    try {
      res = await client.kubeFetch(`${path}?${watchQuery(opts, timeoutSeconds)}`, {
        signal: controller.signal,
        timeoutMs: Number.POSITIVE_INFINITY,
      });
    } catch (err) {
      throw stopped() ?? asOpError("watch", err);
    }
    if (res.status !== 200) {
      // Error bodies are small; the connect timer still bounds reading one.
      const text = await raceAbort(res.text(), controller.signal).catch(() => "");
      throw stopped() ?? errorForStatus("watch", res.status, text);
    }
    if (!res.body) throw new WatchError("watch", "malformed", `${path}: 200 without a body`);

    clearTimeout(timer);
    timer = setTimeout(() => abort("idle"), idleTimeoutMs);
    const reader = res.body.getReader();
    const splitter = new LineSplitter();
    const handle = eventHandler(opts, state);
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await raceAbort(reader.read(), controller.signal);
      } catch (err) {
        throw stopped() ?? new WatchError("watch", "dropped", `${path}: ${errorText(err)}`, undefined, { cause: err });
      }
      if (chunk.done) break;
      timer.refresh();
      let lines: string[];
      try {
        lines = splitter.push(chunk.value);
      } catch (err) {
        throw new WatchError("watch", "malformed", `${path}: ${errorText(err)}`);
      }
      for (const line of lines) handle(line);
    }
    const rest = splitter.finish();
    if (rest.trim() !== "") skip(opts, { line: rest, reason: "stream ended inside a line" });
    return end("closed");
  } catch (err) {
    if (stop === "caller") return end("aborted");
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onCallerAbort);
    controller.abort(); // releases the connection on every exit path
  }
}

function watchQuery(opts: Omit<WatchOptions<never>, "onEvent">, timeoutSeconds: number): URLSearchParams {
  const q = new URLSearchParams({ watch: "true" });
  if (opts.resourceVersion) q.set("resourceVersion", opts.resourceVersion);
  if (opts.labelSelector) q.set("labelSelector", opts.labelSelector);
  if (opts.fieldSelector) q.set("fieldSelector", opts.fieldSelector);
  if (opts.allowWatchBookmarks ?? true) q.set("allowWatchBookmarks", "true");
  q.set("timeoutSeconds", String(timeoutSeconds));
  return q;
}

/** Parses and dispatches one line; throws only for ERROR events, which end the watch. */
function eventHandler<T>(opts: WatchOptions<T>, state: { events: number; resourceVersion?: string }) {
  return (line: string): void => {
    if (line.trim() === "") return;
    let ev: { type?: unknown; object?: unknown };
    try {
      ev = JSON.parse(line);
    } catch (error) {
      return skip(opts, { line, reason: "not JSON", error });
    }
    if (typeof ev !== "object" || ev === null) return skip(opts, { line, reason: "event is not an object" });
    switch (ev.type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        if (!isKubeObject(ev.object)) return skip(opts, { line, reason: `${ev.type} event without an object with metadata` });
        const rv = ev.object.metadata?.resourceVersion;
        if (typeof rv === "string" && rv !== "") state.resourceVersion = rv;
        state.events++;
        try {
          opts.onEvent({ type: ev.type, object: ev.object as T });
        } catch (error) {
          skip(opts, { line, reason: "onEvent threw", error });
        }
        return;
      }
      case "BOOKMARK": {
        const rv = (ev.object as KubeObject | undefined)?.metadata?.resourceVersion;
        if (typeof rv !== "string" || rv === "") return skip(opts, { line, reason: "BOOKMARK without resourceVersion" });
        state.resourceVersion = rv;
        try {
          opts.onBookmark?.(rv);
        } catch (error) {
          skip(opts, { line, reason: "onBookmark threw", error });
        }
        return;
      }
      case "ERROR": {
        const st = (ev.object ?? {}) as KubeStatus;
        const detail = `ERROR event${st.reason ? ` ${st.reason}` : ""}${st.message ? `: ${st.message}` : ""}`;
        if (st.code === 410) throw new GoneError("watch", detail);
        throw new WatchError("watch", "error-event", `${detail} (code ${st.code ?? "none"})`, typeof st.code === "number" ? st.code : undefined);
      }
      default:
        return skip(opts, { line, reason: `unknown event type ${JSON.stringify(ev.type)}` });
    }
  };
}

function skip(opts: Pick<WatchOptions<unknown>, "onSkipped">, s: WatchSkip): void {
  try {
    opts.onSkipped?.({ ...s, line: s.line.length > 2000 ? `${s.line.slice(0, 2000)}…` : s.line });
  } catch {
    // a broken reporter must not end the watch
  }
}
