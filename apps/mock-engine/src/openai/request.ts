/** Reading an OpenAI generation request the way vLLM validates it. */
import type { EngineContext } from "../context.ts";
import type { RecordedRequest } from "../recorder.ts";
import { servesModel } from "../state.ts";
import { completionPrompt, promptTokenCount, renderChat, type Prompt } from "../tokens.ts";
import { errorResponse, modelNotFound } from "./errors.ts";
import type { FinishReason, GenerationKind, ReplyMeta } from "./shapes.ts";

/** Everything decided about a request before generating. */
export interface Plan {
  meta: ReplyMeta;
  prompt: Prompt;
  promptTokens: number;
  /** Tokens to generate per choice. */
  maxTokens: number;
  /** How generation ends when it runs to completion. */
  finish: FinishReason;
  stream: boolean;
  includeUsage: boolean;
  /** kv_transfer_params the request carried. */
  kvIn?: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The request's plan, or the error vLLM would answer. */
export function planRequest(ctx: EngineContext, kind: GenerationKind, body: unknown, rec: RecordedRequest): Plan | Response {
  if (!isObject(body)) return errorResponse(400, "JSON decode error: the body must be a JSON object");
  const st = ctx.state;
  const model = body.model ?? st.models[0];
  if (typeof model !== "string") return errorResponse(400, "model must be a string", "model");
  if (!servesModel(st, model)) return modelNotFound(model);

  let prompt: Prompt | null;
  if (kind === "chat") {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) return errorResponse(400, "messages must be a non-empty list", "messages");
    prompt = { text: renderChat(messages) };
  } else {
    prompt = completionPrompt(body.prompt);
    if (!prompt) return errorResponse(400, "prompt must be a string, a list of strings or token ids", "prompt");
  }

  const asked = body.max_completion_tokens ?? body.max_tokens;
  if (asked != null && (!Number.isInteger(asked) || (asked as number) < 1)) {
    return errorResponse(400, "max_tokens must be at least 1, got " + JSON.stringify(asked), "max_tokens");
  }
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 128) return errorResponse(400, "n must be between 1 and 128", "n");

  const promptTokens = promptTokenCount(prompt);
  const maxTokens = (asked as number | undefined) ?? ctx.opts.defaultMaxTokens;
  if (promptTokens + maxTokens > st.maxModelLen) {
    return errorResponse(
      400,
      `This model's maximum context length is ${st.maxModelLen} tokens. However, you requested ${promptTokens + maxTokens} tokens ` +
        `(${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
    );
  }

  const kvIn = isObject(body.kv_transfer_params) ? body.kv_transfer_params : undefined;
  return {
    meta: {
      kind,
      id: (kind === "chat" ? "chatcmpl-" : "cmpl-") + rec.id,
      created: Math.floor(rec.at / 1000),
      model,
      n: n as number,
    },
    prompt,
    promptTokens,
    maxTokens,
    // Without a max_tokens the fake model "chooses" to stop; with one it runs into the limit.
    finish: asked == null ? "stop" : "length",
    stream: body.stream === true,
    includeUsage: body.stream === true && isObject(body.stream_options) && body.stream_options.include_usage === true,
    kvIn,
  };
}
