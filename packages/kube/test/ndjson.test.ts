import { describe, expect, test } from "bun:test";
import { LineSplitter } from "../src/ndjson.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("LineSplitter", () => {
  test("keeps partial lines until their newline arrives", () => {
    const s = new LineSplitter();
    expect(s.push(bytes('{"a":'))).toEqual([]);
    expect(s.push(bytes('1}\n{"b"'))).toEqual(['{"a":1}']);
    expect(s.push(bytes(":2}\r\n\n"))).toEqual(['{"b":2}', ""]);
    expect(s.finish()).toBe("");
  });

  test("a multi-byte character cut between chunks survives", () => {
    const s = new LineSplitter();
    const all = bytes("🚀 ok\n");
    expect(s.push(all.subarray(0, 2))).toEqual([]);
    expect(s.push(all.subarray(2))).toEqual(["🚀 ok"]);
  });

  test("the unterminated tail is returned at the end", () => {
    const s = new LineSplitter();
    s.push(bytes("done\npartial"));
    expect(s.finish()).toBe("partial");
  });

  test("a line without end is bounded", () => {
    const s = new LineSplitter(10);
    expect(() => s.push(bytes("x".repeat(11)))).toThrow();
  });
});
