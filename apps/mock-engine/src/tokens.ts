/**
 * A stand-in tokenizer: about four characters of text per token, or one token per id when the
 * prompt is given as token ids. Deterministic, so equal prompts share equal token blocks.
 */
export const CHARS_PER_TOKEN = 4;

/** A prompt as the engine sees it: rendered text, or token ids. */
export type Prompt = { text: string; ids?: undefined } | { text?: undefined; ids: number[] };

export function promptTokenCount(p: Prompt): number {
  if (p.ids) return p.ids.length;
  return Math.max(1, Math.ceil(p.text.length / CHARS_PER_TOKEN));
}

/** The text of each full block of `blockSize` tokens, in order (a partial tail block is not cached). */
export function fullBlocks(p: Prompt, blockSize: number): string[] {
  const out: string[] = [];
  if (p.ids) {
    for (let i = 0; i + blockSize <= p.ids.length; i += blockSize) out.push(p.ids.slice(i, i + blockSize).join(","));
    return out;
  }
  const width = blockSize * CHARS_PER_TOKEN;
  for (let i = 0; i + width <= p.text.length; i += width) out.push(p.text.slice(i, i + width));
  return out;
}

type Part = { type?: unknown; text?: unknown };

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    let s = "";
    for (const part of content as Part[]) if (part && typeof part.text === "string") s += part.text;
    return s;
  }
  return "";
}

/** Chat messages rendered stably (a fixed template of role and content), like a chat template would. */
export function renderChat(messages: unknown[]): string {
  let s = "";
  for (const m of messages as { role?: unknown; content?: unknown }[]) {
    s += `<|${typeof m?.role === "string" ? m.role : "user"}|>\n${contentText(m?.content)}\n`;
  }
  return s + "<|assistant|>\n";
}

/** A completions `prompt`: text, list of texts, token ids, or a list of token-id lists. Null if malformed. */
export function completionPrompt(prompt: unknown): Prompt | null {
  if (typeof prompt === "string") return { text: prompt };
  if (!Array.isArray(prompt) || prompt.length === 0) return null;
  if (prompt.every((x) => typeof x === "number")) return { ids: prompt as number[] };
  if (prompt.every((x) => typeof x === "string")) return { text: (prompt as string[]).join("\n") };
  if (prompt.every((x) => Array.isArray(x) && x.every((y) => typeof y === "number"))) return { ids: (prompt as number[][]).flat() };
  return null;
}

/** The generated token at position i, as it appears in a stream delta. */
export function tokenPiece(i: number): string {
  return i === 0 ? "tok0" : ` tok${i}`;
}

const textCache = new Map<number, string>();

/** The whole generated text of n tokens: "tok0 tok1 … tok{n-1}" (memoised: the hot path asks often). */
export function generatedText(n: number): string {
  let t = textCache.get(n);
  if (t === undefined) {
    t = "";
    for (let i = 0; i < n; i++) t += tokenPiece(i);
    if (textCache.size < 4096) textCache.set(n, t);
  }
  return t;
}
