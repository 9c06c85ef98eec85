import type { WatchEvent } from "@switchboard/kube";
import { keyOf } from "./object-fields";
import type { Collection } from "./plan";

/** An object left out, and why: logged by the actor, never fatal. */
export interface Skipped {
  key: string;
  reason: string;
}

type Project = Collection["project"];

function describe(obj: unknown): string {
  try {
    return keyOf(obj);
  } catch {
    return "<object without a name>";
  }
}

const reasonOf = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * A list replaces everything known about the collection: whatever is not in it is gone, which
 * is how objects deleted while no watch was open disappear. One bad item is skipped, not fatal.
 */
export function entriesFromList(items: readonly unknown[], project: Project): { entries: Record<string, unknown>; skipped: Skipped[] } {
  const entries: Record<string, unknown> = {};
  const skipped: Skipped[] = [];
  for (const item of items) {
    try {
      const p = project(item);
      if (p !== null) entries[keyOf(item)] = p;
    } catch (err) {
      skipped.push({ key: describe(item), reason: reasonOf(err) });
    }
  }
  return { entries, skipped };
}

/**
 * One watch event applied to the collection's entries. A malformed ADDED/MODIFIED object loses
 * its entry (it is no longer a known-good worker) and is reported; the others are untouched.
 */
export function applyWatchEvent(
  entries: Record<string, unknown>,
  event: WatchEvent<unknown>,
  project: Project,
): { entries: Record<string, unknown>; skipped?: Skipped } {
  let key: string;
  try {
    key = keyOf(event.object);
  } catch (err) {
    return { entries, skipped: { key: describe(event.object), reason: reasonOf(err) } };
  }
  const { [key]: _old, ...rest } = entries;
  if (event.type === "DELETED") return { entries: rest };
  try {
    const p = project(event.object);
    return { entries: p === null ? rest : { ...rest, [key]: p } };
  } catch (err) {
    return { entries: rest, skipped: { key, reason: reasonOf(err) } };
  }
}
