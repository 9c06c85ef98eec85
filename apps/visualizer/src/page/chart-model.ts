import type { GraphTransition, MachineGraph } from "./wire";

/** A top-level state (or the "any state" marker for transitions defined on the machine itself). */
export interface ChartBox {
  key: string;
  kind: "state" | "any";
  type: string;
  x: number;
  y: number;
  w: number;
  h: number;
  /** Its child states in order, e.g. "waiting → probing → judging". */
  inner: string;
  /** What drives it: "after fast", "invokes waitForIdle". */
  note: string;
}

/** All transitions between two top-level states, drawn as one arrow. */
export interface ChartEdge {
  from: string;
  to: string;
  labels: string[];
  /** Sideways bulge of the arrow, in px; two arrows between the same pair bulge apart. */
  bend: number;
}

export interface ChartModel {
  boxes: ChartBox[];
  edges: ChartEdge[];
  width: number;
  height: number;
}

export const ANY = "*";
const BOX_W = 180;
const BOX_H = 92;

/**
 * Where each known top-level state of the worker machine goes. The states, their arrows and the
 * labels all come from the definition; only the places are fixed. A state not listed here (the
 * machine grew) is placed on an extra row.
 */
const PLACES: Record<string, [number, number]> = {
  pending: [20, 24],
  ready: [340, 24],
  failed: [20, 270],
  not_ready: [340, 270],
  draining: [790, 24],
  stopped: [790, 270],
};
const ANY_PLACE: [number, number, number, number] = [610, 52, 110, 36];
/** Arrows that would cross a box if drawn straight. */
const BENDS: Record<string, number> = { "failed->ready": 45 };

function topOf(id: string, rootId: string): string {
  if (id === rootId) return ANY;
  return id.slice(rootId.length + 1).split(".")[0]!;
}

function labelOf(t: GraphTransition): string {
  if (t.kind === "always") return t.guard ? `[${t.guard}]` : "always";
  return t.guard ? `${t.label} [${t.guard}]` : t.label;
}

/** "x done" and "x error" to the same place read as one line. */
function mergeLabels(labels: string[]): string[] {
  const out = [...new Set(labels)];
  for (const l of [...out]) {
    const m = /^(.*) done$/.exec(l);
    if (m && out.includes(`${m[1]} error`)) {
      out.splice(out.indexOf(l), 1, `${m[1]} done | error`);
      out.splice(out.indexOf(`${m[1]} error`), 1);
    }
  }
  return out;
}

/** Lifts every transition to the top-level states it connects; loops inside a state become its note. */
export function chartModel(g: MachineGraph): ChartModel {
  const rootId = g.root.id;
  const edges = new Map<string, ChartEdge>();
  const inside = new Map<string, Set<string>>();
  for (const t of g.transitions) {
    const from = topOf(t.source, rootId);
    for (const target of t.targets) {
      const to = topOf(target, rootId);
      if (to === ANY) continue;
      if (from === to) {
        if (t.kind === "after") (inside.get(from) ?? inside.set(from, new Set()).get(from)!).add(t.label);
        continue;
      }
      const key = `${from}->${to}`;
      const e = edges.get(key) ?? { from, to, labels: [], bend: BENDS[key] ?? 0 };
      e.labels.push(labelOf(t));
      edges.set(key, e);
    }
  }
  for (const e of edges.values()) {
    e.labels = mergeLabels(e.labels);
    if (edges.has(`${e.to}->${e.from}`) && !BENDS[`${e.from}->${e.to}`]) e.bend = 36;
  }

  const boxes: ChartBox[] = [];
  let extra = 0;
  for (const s of g.root.states) {
    const place = PLACES[s.key] ?? [20 + (extra++ % 5) * 200, 400];
    const notes = [...(inside.get(s.key) ?? [])];
    if (s.invoke.length) notes.push(`invokes ${s.invoke.join(", ")}`);
    if (s.type === "final") notes.push("final");
    boxes.push({ key: s.key, kind: "state", type: s.type, x: place[0], y: place[1], w: BOX_W, h: BOX_H, inner: s.states.map((c) => c.key).join(" → "), note: notes.join(" · ") });
  }
  if ([...edges.values()].some((e) => e.from === ANY)) {
    const [x, y, w, h] = ANY_PLACE;
    boxes.push({ key: ANY, kind: "any", type: "any", x, y, w, h, inner: "", note: "" });
  }
  const height = Math.max(...boxes.map((b) => b.y + b.h)) + 24;
  const width = Math.max(...boxes.map((b) => b.x + b.w)) + 20;
  return { boxes, edges: [...edges.values()], width, height };
}
