import type { AnyStateMachine } from "xstate";

/** One state of a machine, as the visualizer draws it. */
export interface GraphState {
  /** Full id, e.g. "worker.ready.probing". */
  id: string;
  key: string;
  type: "atomic" | "compound" | "parallel" | "final" | "history";
  /** Key of the initial child, for compound states. */
  initial: string | null;
  entry: string[];
  /** Invoked actors by their source name (e.g. "probe", "waitForIdle"). */
  invoke: string[];
  states: GraphState[];
}

export type TransitionKind = "event" | "after" | "always" | "done" | "error";

/** One transition; `targets` is empty for a transition that only runs actions. */
export interface GraphTransition {
  source: string;
  targets: string[];
  kind: TransitionKind;
  /** The event as written in the machine ("worker.drain", "xstate.after.fast…"). */
  event: string;
  /** Short words for an arrow: "worker.drain", "after fast", "probe done", "always". */
  label: string;
  guard: string | null;
  actions: string[];
}

export interface MachineGraph {
  id: string;
  root: GraphState;
  transitions: GraphTransition[];
}

// The StateNode surface we read; xstate's own types hide some of it behind generics.
interface NodeLike {
  id: string;
  key: string;
  type: GraphState["type"];
  initial?: { target?: ReadonlyArray<{ key: string }> };
  entry?: ReadonlyArray<unknown>;
  invoke?: ReadonlyArray<{ id: string; src: unknown }>;
  states: Record<string, NodeLike>;
  transitions: Map<string, ReadonlyArray<TransitionLike>>;
  always?: ReadonlyArray<TransitionLike>;
}
interface TransitionLike {
  target?: ReadonlyArray<{ id: string }>;
  guard?: unknown;
  actions?: ReadonlyArray<unknown>;
}

function nameOf(x: unknown): string {
  if (typeof x === "string") return x;
  if (typeof x === "function") return x.name || "inline";
  if (x && typeof x === "object" && "type" in x) return String((x as { type: unknown }).type);
  return "inline";
}

/** "xstate.after.fast.worker.pending.waiting" → after "fast"; "xstate.done.actor.probe" → probe done. */
function classify(event: string, invokes: Map<string, string>): { kind: TransitionKind; label: string } {
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  if (after) return { kind: "after", label: `after ${after[1]}` };
  const done = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (done) {
    const who = invokes.get(done[2]!) ?? done[2]!;
    return done[1] === "done" ? { kind: "done", label: `${who} done` } : { kind: "error", label: `${who} error` };
  }
  return { kind: "event", label: event };
}

function collectInvokes(node: NodeLike, into: Map<string, string>) {
  for (const inv of node.invoke ?? []) into.set(inv.id, nameOf(inv.src));
  for (const child of Object.values(node.states)) collectInvokes(child, into);
}

function toState(node: NodeLike): GraphState {
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    initial: node.initial?.target?.[0]?.key ?? null,
    // xstate's delayed transitions add internal raise actions: not the author's words.
    entry: (node.entry ?? []).map(nameOf).filter((a) => !a.startsWith("xstate.")),
    invoke: (node.invoke ?? []).map((i) => nameOf(i.src)),
    states: Object.values(node.states).map(toState),
  };
}

function toTransition(source: string, event: string, t: TransitionLike, invokes: Map<string, string>): GraphTransition {
  const { kind, label } = event === "" ? { kind: "always" as const, label: "always" } : classify(event, invokes);
  return {
    source,
    targets: (t.target ?? []).map((s) => s.id),
    kind,
    event,
    label,
    guard: t.guard === undefined ? null : nameOf(t.guard),
    actions: (t.actions ?? []).map(nameOf).filter((a) => !a.startsWith("xstate.")),
  };
}

function collectTransitions(node: NodeLike, invokes: Map<string, string>, out: GraphTransition[]) {
  for (const [event, list] of node.transitions) for (const t of list) out.push(toTransition(node.id, event, t, invokes));
  for (const t of node.always ?? []) out.push(toTransition(node.id, "", t, invokes));
  for (const child of Object.values(node.states)) collectTransitions(child, invokes, out);
}

/** The machine's states and transitions as plain JSON, read from the machine itself. */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root as unknown as NodeLike;
  const invokes = new Map<string, string>();
  collectInvokes(root, invokes);
  const transitions: GraphTransition[] = [];
  collectTransitions(root, invokes, transitions);
  return { id: root.id, root: toState(root), transitions };
}
