/** OpenAI response bodies and stream frames in the shapes vLLM sends. */
import { generatedText, tokenPiece } from "../tokens.ts";

export type GenerationKind = "chat" | "completion";
export type FinishReason = "length" | "stop" | "abort";

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
  prompt_tokens_details: { cached_tokens: number } | null;
}

/** What a response needs to know about its request. */
export interface ReplyMeta {
  kind: GenerationKind;
  id: string;
  created: number;
  model: string;
  n: number;
}

export function usage(promptTokens: number, completionTokens: number, cachedTokens?: number): Usage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: cachedTokens === undefined ? null : { cached_tokens: cachedTokens },
  };
}

function choice(kind: GenerationKind, index: number, text: string, finish: FinishReason) {
  return kind === "chat"
    ? {
        index,
        message: { role: "assistant", content: text, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning_content: null },
        logprobs: null,
        finish_reason: finish,
        stop_reason: null,
      }
    : { index, text, logprobs: null, finish_reason: finish, stop_reason: null, prompt_logprobs: null };
}

/** A whole non-streaming answer of `tokens` generated tokens per choice. */
export function completionBody(m: ReplyMeta, tokens: number, finish: FinishReason, u: Usage, kvTransferParams: unknown): string {
  const text = generatedText(tokens);
  const choices = [];
  for (let i = 0; i < m.n; i++) choices.push(choice(m.kind, i, text, finish));
  return JSON.stringify({
    id: m.id,
    object: m.kind === "chat" ? "chat.completion" : "text_completion",
    created: m.created,
    model: m.model,
    choices,
    usage: u,
    prompt_logprobs: null,
    kv_transfer_params: kvTransferParams ?? null,
  });
}

function frame(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

function chunkHead(m: ReplyMeta) {
  return { id: m.id, object: m.kind === "chat" ? "chat.completion.chunk" : "text_completion", created: m.created, model: m.model };
}

/** Chat streams open with an empty assistant delta per choice, as vLLM does. */
export function roleFrames(m: ReplyMeta): string {
  if (m.kind !== "chat") return "";
  let s = "";
  for (let i = 0; i < m.n; i++) {
    s += frame({ ...chunkHead(m), choices: [{ index: i, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] });
  }
  return s;
}

/** The frames carrying token i for every choice; the last token carries the finish reason. */
export function tokenFrames(m: ReplyMeta, i: number, finish: FinishReason | null): string {
  const piece = tokenPiece(i);
  let s = "";
  for (let c = 0; c < m.n; c++) {
    const ch =
      m.kind === "chat"
        ? { index: c, delta: { content: piece }, logprobs: null, finish_reason: finish, ...(finish ? { stop_reason: null } : {}) }
        : { index: c, text: piece, logprobs: null, finish_reason: finish, stop_reason: null };
    s += frame({ ...chunkHead(m), choices: [ch] });
  }
  return s;
}

/** An abort ends a stream early with an empty delta carrying finish_reason "abort". */
export function abortFrames(m: ReplyMeta): string {
  let s = "";
  for (let c = 0; c < m.n; c++) {
    const ch =
      m.kind === "chat"
        ? { index: c, delta: { content: "" }, logprobs: null, finish_reason: "abort", stop_reason: null }
        : { index: c, text: "", logprobs: null, finish_reason: "abort", stop_reason: null };
    s += frame({ ...chunkHead(m), choices: [ch] });
  }
  return s;
}

export function usageFrame(m: ReplyMeta, u: Usage): string {
  return frame({ ...chunkHead(m), choices: [], usage: u });
}

export const DONE = "data: [DONE]\n\n";
