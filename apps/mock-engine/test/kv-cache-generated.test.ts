import { afterAll, expect, test } from "bun:test";
import { startMockEngine, type MockEngine } from "../src/index.ts";
import { renderChat } from "../src/tokens.ts";
import { client } from "./helpers.ts";

const engines: MockEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.stop())));

test("generated tokens stay cached: the next chat turn, which repeats the answer, hits it too", async () => {
  const e = await startMockEngine({ kvCache: { prefillMsPerToken: 0 }, maxModelLen: 100_000 });
  engines.push(e);
  const ai = client(e);
  const first = [
    { role: "system" as const, content: "s".repeat(300) },
    { role: "user" as const, content: "tell me more" },
  ];
  const answer = (await ai.chat.completions.create({ model: "mock-model", messages: first, max_tokens: 64 })).choices[0]!.message.content!;
  expect(answer.length).toBeGreaterThan(256);
  const next = [...first, { role: "assistant" as const, content: answer }, { role: "user" as const, content: "and then?" }];
  const r = await ai.chat.completions.create({ model: "mock-model", messages: next, max_tokens: 1 });
  // 64 characters make a 16-token block: every full block of the first prompt plus its answer.
  const blocks = Math.floor((renderChat(first).length + answer.length) / 64);
  expect((r.usage as any).prompt_tokens_details).toEqual({ cached_tokens: blocks * 16 });
});
