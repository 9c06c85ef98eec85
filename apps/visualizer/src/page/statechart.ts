import { ANY, chartModel, type ChartBox, type ChartEdge } from "./chart-model";
import { setText, svg } from "./dom";
import { STATUS_LABEL } from "./format";
import type { MachineGraph, Status } from "./wire";

type Point = { x: number; y: number };

const center = (b: ChartBox): Point => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 });

/** Where the ray from the box's centre towards `p` leaves the box. */
function exitPoint(b: ChartBox, p: Point, pad = 4): Point {
  const c = center(b);
  const dx = p.x - c.x;
  const dy = p.y - c.y;
  const sx = dx === 0 ? Infinity : (b.w / 2 + pad) / Math.abs(dx);
  const sy = dy === 0 ? Infinity : (b.h / 2 + pad) / Math.abs(dy);
  const s = Math.min(sx, sy);
  return { x: c.x + dx * s, y: c.y + dy * s };
}

/** A quadratic arrow from box to box, bulging `bend` px to its left; and the point for its label. */
function arrow(a: ChartBox, b: ChartBox, bend: number): { d: string; label: Point } {
  const ca = center(a);
  const cb = center(b);
  const len = Math.hypot(cb.x - ca.x, cb.y - ca.y) || 1;
  const nx = (cb.y - ca.y) / len;
  const ny = -(cb.x - ca.x) / len;
  const ctrl = { x: (ca.x + cb.x) / 2 + nx * bend * 2, y: (ca.y + cb.y) / 2 + ny * bend * 2 };
  const p0 = exitPoint(a, ctrl);
  const p2 = exitPoint(b, ctrl, 8);
  const label = { x: 0.25 * p0.x + 0.5 * ctrl.x + 0.25 * p2.x, y: 0.25 * p0.y + 0.5 * ctrl.y + 0.25 * p2.y };
  return { d: `M${p0.x.toFixed(1)},${p0.y.toFixed(1)} Q${ctrl.x.toFixed(1)},${ctrl.y.toFixed(1)} ${p2.x.toFixed(1)},${p2.y.toFixed(1)}`, label };
}

/**
 * The worker machine drawn as SVG from its definition: top-level states as boxes with live
 * worker counts, transitions as labelled arrows. Clicking a state filters the worker table.
 */
export class Statechart {
  private readonly counts = new Map<string, SVGTextElement>();
  private readonly groups = new Map<string, SVGGElement>();

  constructor(
    host: Element,
    graph: MachineGraph,
    private readonly onPick: (status: Status | null) => void,
  ) {
    const model = chartModel(graph);
    const root = svg("svg", { viewBox: `0 0 ${model.width} ${model.height}`, class: "statechart", role: "img", "aria-label": `${graph.id} state machine` });
    root.append(
      svg("defs", {}, svg("marker", { id: "arrowhead", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))),
    );
    const byKey = new Map(model.boxes.map((b) => [b.key, b]));
    const edgeLayer = svg("g", { class: "edges" });
    const labelLayer = svg("g", { class: "edge-labels" });
    for (const e of model.edges) this.drawEdge(e, byKey, edgeLayer, labelLayer);
    const boxLayer = svg("g", { class: "states" });
    for (const b of model.boxes) boxLayer.append(this.drawBox(b, graph.root.initial === b.key));
    root.append(edgeLayer, boxLayer, labelLayer);
    host.replaceChildren(root);
  }

  private drawEdge(e: ChartEdge, boxes: Map<string, ChartBox>, edges: SVGGElement, labels: SVGGElement) {
    const a = boxes.get(e.from);
    const b = boxes.get(e.to);
    if (!a || !b) return;
    const { d, label } = arrow(a, b, e.bend);
    edges.append(svg("path", { d, class: "edge", "data-from": e.from, "data-to": e.to, "marker-end": "url(#arrowhead)" }));
    const lineH = 13;
    const top = label.y - ((e.labels.length - 1) * lineH) / 2 + 4;
    const text = svg("text", { class: "edge-label", x: label.x.toFixed(1), y: top.toFixed(1), "text-anchor": "middle" });
    e.labels.forEach((l, i) => text.append(svg("tspan", { x: label.x.toFixed(1), dy: i === 0 ? 0 : lineH }, l)));
    labels.append(text);
  }

  private drawBox(b: ChartBox, initial: boolean): SVGGElement {
    if (b.kind === "any") {
      const g = svg("g", { class: "any-state", "data-state": ANY });
      g.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: b.h / 2 }), svg("text", { x: b.x + b.w / 2, y: b.y + b.h / 2 + 4, "text-anchor": "middle" }, "any state"));
      return g;
    }
    const g = svg("g", { class: `state status-${b.key}${b.type === "final" ? " final" : ""}`, "data-state": b.key, tabindex: "0" });
    g.append(svg("rect", { class: "box", x: b.x, y: b.y, width: b.w, height: b.h, rx: 10 }));
    if (b.type === "final") g.append(svg("rect", { class: "box-inner", x: b.x + 4, y: b.y + 4, width: b.w - 8, height: b.h - 8, rx: 7 }));
    if (initial) {
      g.append(svg("circle", { class: "initial", cx: b.x - 2, cy: b.y + b.h / 2, r: 5 }));
    }
    g.append(svg("text", { class: "state-name", x: b.x + 12, y: b.y + 24 }, STATUS_LABEL[b.key] ?? b.key));
    if (b.inner) g.append(svg("text", { class: "state-inner", x: b.x + 12, y: b.y + 48 }, b.inner));
    if (b.note) g.append(svg("text", { class: "state-note", x: b.x + 12, y: b.y + 68 }, b.note));
    if (b.key in STATUS_LABEL) {
      g.append(svg("rect", { class: "count-bg", x: b.x + b.w - 52, y: b.y + 8, width: 42, height: 22, rx: 11 }));
      const count = svg("text", { class: "count", x: b.x + b.w - 31, y: b.y + 24, "text-anchor": "middle" }, "0");
      this.counts.set(b.key, count);
      g.addEventListener("click", () => this.onPick(b.key as Status));
      g.addEventListener("keydown", (ev) => {
        if ((ev as KeyboardEvent).key === "Enter") this.onPick(b.key as Status);
      });
      g.append(count);
    }
    this.groups.set(b.key, g);
    return g;
  }

  /** Live counts; a state holding workers is lit, the one the table is filtered on is outlined. */
  update(counts: Record<string, number>, picked: Status | null) {
    for (const [key, text] of this.counts) {
      const n = counts[key] ?? 0;
      setText(text, String(n));
      const g = this.groups.get(key)!;
      g.classList.toggle("occupied", n > 0);
      g.classList.toggle("picked", picked === key);
    }
  }
}
