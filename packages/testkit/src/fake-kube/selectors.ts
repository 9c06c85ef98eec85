import type { KubeObject } from "../kube-objects.ts";

export type Matcher = (obj: KubeObject) => boolean;

export class SelectorError extends Error {}

type Term = { key: string; op: "=" | "!=" | "exists" | "!exists"; value: string };

/** Equality-based label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-joined (AND). */
export function parseLabelSelector(sel: string | null): Matcher {
  const terms = parseTerms(sel, true);
  return (obj) => terms.every((t) => test(t, obj.metadata.labels?.[t.key]));
}

/** Field selectors over dotted paths, e.g. `metadata.name=x,status.phase!=Failed`. */
export function parseFieldSelector(sel: string | null): Matcher {
  const terms = parseTerms(sel, false);
  return (obj) => terms.every((t) => test(t, fieldValue(obj, t.key) ?? ""));
}

function parseTerms(sel: string | null, allowExists: boolean): Term[] {
  if (!sel) return [];
  return sel.split(",").map((raw) => {
    const s = raw.trim();
    if (/\s(in|notin)\s|\(/.test(s)) throw new SelectorError(`set-based selector not supported by the fake: ${s}`);
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(s);
    if (m) return { key: m[1].trim(), op: m[2] === "!=" ? "!=" : "=", value: m[3].trim() };
    if (allowExists && /^![^=!]+$/.test(s)) return { key: s.slice(1).trim(), op: "!exists", value: "" };
    if (allowExists && /^[^=!]+$/.test(s)) return { key: s, op: "exists", value: "" };
    throw new SelectorError(`unable to parse requirement: ${s}`);
  });
}

function test(t: Term, actual: string | undefined): boolean {
  switch (t.op) {
    case "=":
      return actual === t.value;
    case "!=":
      return actual !== t.value;
    case "exists":
      return actual !== undefined;
    case "!exists":
      return actual === undefined;
  }
}

function fieldValue(obj: KubeObject, dotted: string): string | undefined {
  let cur: unknown = obj;
  for (const part of dotted.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur === undefined || cur === null ? undefined : String(cur);
}
