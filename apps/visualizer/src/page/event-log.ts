import { el, setText } from "./dom";
import { clock } from "./format";
import type { LiveEvent } from "./wire";

interface Line {
  node: HTMLElement;
  event: LiveEvent;
  repeats: number;
  countNode: HTMLElement;
  timeNode: HTMLElement;
}

/**
 * The scrolling log of transitions, probe results, restarts, drains and source changes, newest
 * on top. A line repeating the one above it (a worker failing probe after probe) is counted, not
 * added again. Bounded: the oldest lines leave.
 */
export class EventLog {
  private readonly lines: Line[] = [];

  constructor(
    private readonly list: HTMLElement,
    private readonly onSelect: (workerId: string) => void,
    private readonly max = 400,
  ) {
    list.addEventListener("click", (ev) => {
      const a = (ev.target as HTMLElement).closest<HTMLElement>("[data-worker]");
      if (a?.dataset.worker) this.onSelect(a.dataset.worker);
    });
  }

  add(events: readonly LiveEvent[]) {
    if (!events.length) return;
    const fresh: HTMLElement[] = [];
    for (const e of events) {
      const top = this.lines[this.lines.length - 1];
      if (top && top.event.worker === e.worker && top.event.kind === e.kind && top.event.message === e.message) {
        top.repeats++;
        setText(top.countNode, `×${top.repeats}`);
        setText(top.timeNode, clock(e.at));
        continue;
      }
      const line = this.line(e);
      this.lines.push(line);
      fresh.push(line.node);
    }
    // Newest first: prepend this batch in one go.
    this.list.prepend(...fresh.reverse());
    while (this.lines.length > this.max) this.lines.shift()!.node.remove();
  }

  private line(e: LiveEvent): Line {
    const timeNode = el("time", {}, clock(e.at));
    const countNode = el("span", { class: "repeats" });
    const who = e.kind === "source" ? el("span", { class: "who source" }, e.url) : el("a", { class: "who", "data-worker": e.worker, href: "#" }, e.url);
    const node = el("li", { class: `log-entry kind-${e.kind}${e.to ? ` to-${e.to}` : ""}`, "data-kind": e.kind }, timeNode, el("span", { class: "kind" }, e.kind), who, el("span", { class: "msg" }, e.message), countNode);
    return { node, event: e, repeats: 1, countNode, timeNode };
  }
}
