import { describe, expect, test } from "bun:test";
import { sessionKeyFrom } from "../src/index.ts";

describe("sessionKeyFrom", () => {
  test("precedence: configured header, X-Session-ID, X-User-ID, body session_id, body user", () => {
    const body = { session_id: "body-session", user: "body-user" };
    const all = { "x-tenant": "tenant", "x-session-id": "hdr-session", "x-user-id": "hdr-user" };
    expect(sessionKeyFrom(all, body, "X-Tenant")).toBe("tenant");
    expect(sessionKeyFrom(all, body)).toBe("hdr-session");
    expect(sessionKeyFrom({ "x-user-id": "hdr-user" }, body)).toBe("hdr-user");
    expect(sessionKeyFrom({}, body)).toBe("body-session");
    expect(sessionKeyFrom({}, { user: "body-user" })).toBe("body-user");
    expect(sessionKeyFrom({}, { messages: [] })).toBeUndefined();
  });

  test("header names are case-insensitive, for Headers and plain records", () => {
    expect(sessionKeyFrom(new Headers({ "X-Session-ID": "s1" }), null)).toBe("s1");
    expect(sessionKeyFrom({ "X-Session-Id": "s2" }, null)).toBe("s2");
    expect(sessionKeyFrom(new Headers({ "x-conversation": "c1" }), {}, "X-Conversation")).toBe("c1");
  });

  test("blank values do not count; numeric session ids do", () => {
    expect(sessionKeyFrom({ "x-session-id": "  " }, { user: "u" })).toBe("u");
    expect(sessionKeyFrom({}, { session_id: "", user: "u" })).toBe("u");
    expect(sessionKeyFrom({}, { session_id: 42 })).toBe("42");
    expect(sessionKeyFrom({}, "not an object")).toBeUndefined();
    expect(sessionKeyFrom({}, { user: { id: 1 } })).toBeUndefined();
  });
});
