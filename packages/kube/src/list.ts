import { raceAbort } from "./abort.ts";
import type { KubeClient } from "./client.ts";
import { GoneError, ListError, asOpError } from "./errors.ts";
import { isKubeObject, type KubeObject } from "./objects.ts";
import { errorForStatus } from "./status.ts";

export const DEFAULT_LIST_TIMEOUT_MS = 15_000;
export const DEFAULT_LIST_PAGE_SIZE = 500;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the list follows `continue` tokens until done. Default 500. */
  limit?: number;
  /** Deadline for the whole list, all pages. Default 15 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** An item that is not an object with metadata: reported here and left out. */
  onSkipped?: (skip: { item: unknown; reason: string }) => void;
}

export interface ListResult<T> {
  items: T[];
  /** The point in history this list reflects: watch from here to miss nothing. */
  resourceVersion: string;
}

// An expired continue token is answered with 410: the list restarts from the first page.
const CONTINUE_RESTARTS = 2;

/**
 * Lists a collection (e.g. `podsPath(ns)`). Rejects with GoneError (410), or ListError with
 * reason connect | tls | timeout | aborted | unauthorized | forbidden | http | malformed.
 */
export async function list<T extends KubeObject = KubeObject>(
  client: KubeClient,
  path: string,
  opts: ListOptions = {},
): Promise<ListResult<T>> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  try {
    for (let restart = 0; ; restart++) {
      try {
        return await listPages<T>(client, path, opts, signal);
      } catch (err) {
        if (!(err instanceof ContinueExpired) || restart >= CONTINUE_RESTARTS) throw err;
      }
    }
  } catch (err) {
    if (deadline.aborted) throw new ListError("list", "timeout", `${path} not complete within ${timeoutMs} ms`, undefined, { cause: err });
    if (opts.signal?.aborted) throw new ListError("list", "aborted", `${path} aborted by caller`, undefined, { cause: err });
    throw asOpError("list", err);
  }
}

class ContinueExpired extends GoneError {}

async function listPages<T>(client: KubeClient, path: string, opts: ListOptions, signal: AbortSignal): Promise<ListResult<T>> {
  const items: T[] = [];
  let resourceVersion: string | undefined;
  let cont: string | undefined;
  do {
    const query = new URLSearchParams();
    if (opts.labelSelector) query.set("labelSelector", opts.labelSelector);
    if (opts.fieldSelector) query.set("fieldSelector", opts.fieldSelector);
    query.set("limit", String(opts.limit ?? DEFAULT_LIST_PAGE_SIZE));
    if (cont) query.set("continue", cont);
    const res = await client.kubeFetch(`${path}?${query}`, { signal, timeoutMs: Number.POSITIVE_INFINITY });
    const text = await raceAbort(res.text(), signal);
    if (!res.ok) {
      const err = errorForStatus("list", res.status, text);
      throw cont && err instanceof GoneError ? new ContinueExpired("list", err.detail) : err;
    }
    const page = parseListPage(path, text);
    for (const item of page.items) {
      if (isKubeObject(item)) items.push(item as T);
      else opts.onSkipped?.({ item, reason: "list item is not an object with metadata" });
    }
    // Every page of one list carries the snapshot's resourceVersion; the first one names it.
    resourceVersion ??= page.resourceVersion;
    cont = page.continue;
  } while (cont);
  return { items, resourceVersion };
}

function parseListPage(path: string, text: string): { items: unknown[]; resourceVersion: string; continue?: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ListError("list", "malformed", `${path}: response is not JSON: ${text.slice(0, 120)}`);
  }
  const b = body as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } } | null;
  const items = b?.items ?? [];
  const rv = b?.metadata?.resourceVersion;
  if (!Array.isArray(items) || typeof rv !== "string" || rv === "") {
    throw new ListError("list", "malformed", `${path}: not a list with items and metadata.resourceVersion`);
  }
  const cont = typeof b?.metadata?.continue === "string" && b.metadata.continue !== "" ? b.metadata.continue : undefined;
  return { items, resourceVersion: rv, continue: cont };
}
