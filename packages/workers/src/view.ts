import type { SnapshotFrom } from "xstate";
import { statusOfState } from "./context";
import type { WorkerMachine } from "./machine";
import type { WorkerStatus } from "./types";

export type WorkerSnapshot = SnapshotFrom<WorkerMachine>;

/** The worker's status, read from the machine's state value alone. */
export function statusOf(snapshot: WorkerSnapshot): WorkerStatus {
  const value = snapshot.value;
  const top = typeof value === "string" ? value : Object.keys(value)[0]!;
  return statusOfState[top] ?? "pending";
}

/** Only a Ready worker takes requests. */
export function isRoutable(snapshot: WorkerSnapshot): boolean {
  return snapshot.status === "active" && statusOf(snapshot) === "ready";
}
