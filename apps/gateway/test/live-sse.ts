/** A small SSE client for the live-stream tests: reads frames off a real HTTP stream. */
export interface SseMessage {
  event: string;
  data: any;
  at: number;
}

export class SseReader {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  retry: number | null = null;
  ended = false;
  private readonly abort = new AbortController();
  private buffer = "";
  private waiters = new Set<() => void>();

  private constructor(readonly response: Response) {}

  static async open(url: string, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<SseReader> {
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(new Error(`no response from ${url} within ${timeoutMs} ms`)), timeoutMs);
    const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: ctrl.signal });
    clearTimeout(timer);
    const r = new SseReader(res);
    r.abort.signal.addEventListener("abort", () => ctrl.abort());
    if (res.ok && res.body) void r.pump(res.body);
    return r;
  }

  private async pump(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { value: chunk, done } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = this.buffer.indexOf("\n\n")) >= 0) {
          this.parse(this.buffer.slice(0, cut));
          this.buffer = this.buffer.slice(cut + 2);
        }
        this.wake();
      }
    } catch {
      // closed by us or by the server
    }
    this.ended = true;
    this.wake();
  }

  private parse(block: string) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) this.comments.push(line.slice(1).trim());
      else if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
      else if (line.startsWith("retry: ")) this.retry = Number(line.slice(7));
    }
    if (data.length) this.messages.push({ event, data: JSON.parse(data.join("\n")), at: Date.now() });
  }

  private wake() {
    for (const w of this.waiters) w();
  }

  /** Resolves with the first message from index `from` on that matches; rejects after `timeoutMs`. */
  async next(match: (m: SseMessage) => boolean, timeoutMs = 3000, from = 0): Promise<SseMessage> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(from).find(match);
      if (found) return found;
      if (this.ended) throw new Error("stream ended before the expected message");
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no matching SSE message within ${timeoutMs} ms (got ${this.messages.length})`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          this.waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
  }

  close() {
    this.abort.abort();
  }
}
