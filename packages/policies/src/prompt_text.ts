import { hashHex } from "./hash.ts";

/**
 * Chat messages as one text, for prefix matching. Stable (same messages, same text) and
 * prefix-preserving: the rendering of a conversation starts with the rendering of any earlier
 * part of it, so each turn of a session matches the cache the previous turns left. Large
 * non-text parts (images, audio, files) are stood in for by a hash of their content.
 */
export function renderChatForPrefix(messages: readonly unknown[]): string {
  let out = "";
  for (const m of messages) out += renderMessage(m);
  return out;
}

/**
 * The prompt of an OpenAI-style request body as text: chat `messages` (after a stand-in for
 * `tools`, which chat templates put first), completions `prompt` (string, strings, token ids),
 * or `input` (embeddings / responses). Undefined when there is none.
 */
export function promptTextOf(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const b = body as Record<string, unknown>;
  if (Array.isArray(b.messages)) {
    const tools = b.tools === undefined || b.tools === null ? "" : `<|tools:${hashHex(JSON.stringify(b.tools))}|>\n`;
    return tools + renderChatForPrefix(b.messages);
  }
  return promptValue(b.prompt) ?? inputValue(b.input);
}

function renderMessage(m: unknown): string {
  if (m === null || typeof m !== "object") return `<|?|>${String(m)}\n`;
  const msg = m as Record<string, unknown>;
  const role = typeof msg.role === "string" ? msg.role : "?";
  const name = typeof msg.name === "string" ? `:${msg.name}` : "";
  let out = `<|${role}${name}|>${renderContent(msg.content)}`;
  if (typeof msg.tool_call_id === "string") out += `<|tool_call_id:${msg.tool_call_id}|>`;
  if (msg.tool_calls !== undefined && msg.tool_calls !== null) out += `<|tool_calls|>${JSON.stringify(msg.tool_calls)}`;
  return `${out}\n`;
}

function renderContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  if (!Array.isArray(content)) return JSON.stringify(content);
  let out = "";
  for (const part of content) out += renderPart(part);
  return out;
}

/** Part types that carry plain text (chat completions, responses API input and output). */
const textParts = new Set<unknown>(["text", "input_text", "output_text"]);

function renderPart(part: unknown): string {
  if (typeof part === "string") return part;
  if (part === null || typeof part !== "object") return String(part);
  const p = part as Record<string, unknown>;
  if (typeof p.text === "string" && textParts.has(p.type)) return p.text;
  const type = typeof p.type === "string" ? p.type : "part";
  return `<|${type}:${hashHex(JSON.stringify(p))}|>`;
}

function promptValue(prompt: unknown): string | undefined {
  if (typeof prompt === "string") return prompt;
  if (!Array.isArray(prompt) || prompt.length === 0) return undefined;
  if (prompt.every((x) => typeof x === "number")) return tokensText(prompt as number[]);
  // A batch: the request goes to one worker, so all of it is that worker's prompt text.
  return prompt.map((p) => (typeof p === "string" ? p : Array.isArray(p) ? tokensText(p) : "")).join("\n");
}

function inputValue(input: unknown): string | undefined {
  if (Array.isArray(input) && input.some((x) => x !== null && typeof x === "object" && !Array.isArray(x))) {
    return renderChatForPrefix(input);
  }
  return promptValue(input);
}

/** Token ids each closed by a comma, so "1,2,3," is not a prefix of "1,2,34,". */
function tokensText(tokens: readonly unknown[]): string {
  let out = "";
  for (const t of tokens) out += `${t},`;
  return out;
}
