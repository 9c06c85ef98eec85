import type { WorkerStatus } from "./types";

/**
 * Whether the next successful probe should re-read the engine id. The id is not re-read on every
 * Ready probe (it is costly and can hang on a starting engine), only where it may have changed or
 * where the last read did not complete.
 */
export function shouldReadIdentity(
  status: WorkerStatus,
  idKnown: boolean,
  confirmed: boolean,
  pinned = false,
): boolean {
  if (pinned) return false;
  switch (status) {
    case "draining":
      return false;
    case "not_ready":
    case "failed":
      return true; // the engine may have restarted while it was down: read before promotion
    case "pending":
      // No id yet, or a known one whose last read did not complete (or the engine restarted in
      // place): read before promotion. An engine that reported none (unknown but confirmed) is not re-read.
      return !confirmed;
    case "ready":
      return !confirmed;
  }
}
