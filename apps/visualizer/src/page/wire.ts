/**
 * What the gateway sends (GET /machine, GET /live). Types only, taken from the gateway's own
 * definitions: a change there that the page does not follow fails the typecheck.
 */
import type { LiveSnapshot, LiveWorker } from "../../../gateway/src/live/messages";
import type { MachineGraph } from "../../../gateway/src/live/machine-graph";

export type { LiveDelta, LiveEvent, LiveSnapshot, LiveWorker } from "../../../gateway/src/live/messages";
export type { GraphState, GraphTransition, MachineGraph } from "../../../gateway/src/live/machine-graph";
export type SourceStatus = LiveSnapshot["sources"][number];
export type Status = LiveWorker["status"];

export interface MachinesDocument {
  worker: MachineGraph;
  discovery: Record<string, MachineGraph>;
}
