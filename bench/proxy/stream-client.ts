/**
 * Streaming load, run as its own process: `concurrency` clients each open 256-token SSE streams
 * back to back for `seconds`, timing the first body byte and the whole stream.
 * Usage: bun stream-client.ts <url> <model> <concurrency> <seconds> <tokens>
 * Prints one JSON line: {ttfbMs: number[], totalMs: number[], errors: number}.
 */
const [url, model, concurrencyArg, secondsArg, tokensArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg ?? 8);
const seconds = Number(secondsArg ?? 3);
const tokens = Number(tokensArg ?? 256);
const body = JSON.stringify({ model, messages: [{ role: "user", content: "Tell me a long story." }], max_tokens: tokens, stream: true });
const decoder = new TextDecoder();

const ttfbMs: number[] = [];
const totalMs: number[] = [];
let errors = 0;

async function one(): Promise<void> {
  const started = performance.now();
  const res = await fetch(url!, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(30_000) });
  if (!res.ok || !res.body) {
    errors++;
    await res.body?.cancel();
    return;
  }
  const reader = res.body.getReader();
  let first = 0;
  let tail = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!first) first = performance.now();
    tail = (tail + decoder.decode(value, { stream: true })).slice(-64);
  }
  // A stream is complete only with its terminator; anything else is an error, not a fast result.
  if (!tail.includes("[DONE]")) {
    errors++;
    return;
  }
  ttfbMs.push(first - started);
  totalMs.push(performance.now() - started);
}

const until = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      try {
        await one();
      } catch {
        errors++;
      }
    }
  }),
);
console.log(JSON.stringify({ ttfbMs, totalMs, errors }));
export {};
