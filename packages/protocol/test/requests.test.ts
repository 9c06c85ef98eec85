import { describe, expect, test } from "bun:test";
import { parseJson, validateRequest } from "../src";

describe("request validation", () => {
  test("accepts well-formed requests and passes unknown fields", () => {
    expect(validateRequest("chat", { model: "m", messages: [{ role: "user", content: "hi" }], foo: 1 })).toBeNull();
    expect(validateRequest("completions", { model: "m", prompt: "hi", stream: true })).toBeNull();
    expect(validateRequest("embeddings", { model: "m", input: ["a", "b"] })).toBeNull();
  });

  test("a missing model is a 400 naming the parameter", () => {
    const e = validateRequest("chat", { messages: [{ role: "user", content: "hi" }] })!;
    expect(e.status).toBe(400);
    expect(e.body().error).toMatchObject({ type: "invalid_request_error", code: "missing_required_parameter", param: "model" });
  });

  test("wrong field types are a 400 naming the field", () => {
    const e = validateRequest("chat", { model: "m", messages: [{ role: "user", content: "x" }], stream: "yes" })!;
    expect(e.status).toBe(400);
    expect(e.body().error.param).toBe("stream");
    expect(validateRequest("chat", { model: 42, messages: [] })!.status).toBe(400);
    expect(validateRequest("completions", { model: "m", prompt: "p", max_tokens: -1 })!.body().error.param).toBe("max_tokens");
    expect(validateRequest("chat", [1, 2])!.status).toBe(400);
  });

  test("invalid JSON is a 400 with the parser's reason", () => {
    const r = parseJson("{nope");
    expect("error" in r && r.error.status).toBe(400);
    expect("error" in r && r.error.body().error.code).toBe("invalid_json");
  });
});
