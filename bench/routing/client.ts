/** One streaming chat request, timed from the client: time to first token and to the end. */

export interface Outcome {
  ok: boolean;
  status: number;
  /** ms from sending to the first content token. */
  ttftMs: number;
  /** ms from sending to the end of the stream. */
  e2eMs: number;
  content: string;
  error?: string;
}

const decoder = new TextDecoder();

export async function streamChat(url: string, body: Record<string, unknown>, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  let ttftMs = Number.NaN;
  let content = "";
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, stream: true }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok || !res.body) {
      const text = await res.text();
      return { ok: false, status: res.status, ttftMs, e2eMs: performance.now() - started, content, error: text.slice(0, 200) };
    }
    let buf = "";
    let done = false;
    const reader = res.body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buf += decoder.decode(r.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") {
          done = true;
          continue;
        }
        const piece = (JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
        if (piece) {
          if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
          content += piece;
        }
      }
    }
    const e2eMs = performance.now() - started;
    return done ? { ok: true, status: res.status, ttftMs, e2eMs, content } : { ok: false, status: res.status, ttftMs, e2eMs, content, error: "stream ended without [DONE]" };
  } catch (err) {
    return { ok: false, status: 0, ttftMs, e2eMs: performance.now() - started, content, error: (err as Error).message };
  }
}
