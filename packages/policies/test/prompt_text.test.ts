import { describe, expect, test } from "bun:test";
import { promptTextOf, renderChatForPrefix } from "../src/index.ts";

describe("renderChatForPrefix", () => {
  const convo = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello", tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "t1", content: "42" },
  ];

  test("stable, and each earlier part of a conversation renders as a prefix of the whole", () => {
    const whole = renderChatForPrefix(convo);
    expect(renderChatForPrefix(structuredClone(convo))).toBe(whole);
    for (let k = 0; k < convo.length; k++) expect(whole.startsWith(renderChatForPrefix(convo.slice(0, k)))).toBe(true);
  });

  test("roles and content both matter", () => {
    const a = renderChatForPrefix([{ role: "user", content: "x" }]);
    expect(renderChatForPrefix([{ role: "assistant", content: "x" }])).not.toBe(a);
    expect(renderChatForPrefix([{ role: "user", content: "y" }])).not.toBe(a);
  });

  test("text parts read as text; images stand in as a short hash of their content", () => {
    const big = `data:image/png;base64,${"A".repeat(100_000)}`;
    const parts = (url: string) => [
      { role: "user", content: [{ type: "text", text: "look: " }, { type: "image_url", image_url: { url } }] },
    ];
    const text = renderChatForPrefix(parts(big));
    expect(text.startsWith("<|user|>look: ")).toBe(true);
    expect(text.length).toBeLessThan(100);
    expect(renderChatForPrefix(parts(`${big}B`))).not.toBe(text);
  });
});

describe("promptTextOf", () => {
  test("chat bodies render their messages, after a stand-in for tools", () => {
    const messages = [{ role: "user", content: "hi" }];
    expect(promptTextOf({ messages })).toBe(renderChatForPrefix(messages));
    const withTools = promptTextOf({ messages, tools: [{ type: "function", function: { name: "f" } }] })!;
    expect(withTools.endsWith(renderChatForPrefix(messages))).toBe(true);
    expect(withTools).not.toBe(renderChatForPrefix(messages));
  });

  test("completions prompts: a string, a batch, token ids", () => {
    expect(promptTextOf({ prompt: "Once upon" })).toBe("Once upon");
    expect(promptTextOf({ prompt: ["a", "b"] })).toBe("a\nb");
    const t = promptTextOf({ prompt: [1, 2, 3] })!;
    expect(promptTextOf({ prompt: [1, 2, 34] })!.startsWith(t)).toBe(false);
    expect(promptTextOf({ prompt: [1, 2, 3, 4] })!.startsWith(t)).toBe(true);
    expect(promptTextOf({ prompt: [[1, 2], [3]] })).toBe("1,2,\n3,");
  });

  test("input (embeddings, responses) and absent prompts", () => {
    expect(promptTextOf({ input: "embed me" })).toBe("embed me");
    expect(promptTextOf({ input: [{ role: "user", content: [{ type: "input_text", text: "q" }] }] })).toBe("<|user|>q\n");
    expect(promptTextOf({ model: "m" })).toBeUndefined();
    expect(promptTextOf(null)).toBeUndefined();
    expect(promptTextOf("text")).toBeUndefined();
  });
});
