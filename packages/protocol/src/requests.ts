import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { errors, type OpenAIError } from "./errors";

// Only what the router relies on is checked; every other field passes through to the engine untouched.
const common = {
  model: Type.String({ minLength: 1 }),
  stream: Type.Optional(Type.Boolean()),
  max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  n: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  user: Type.Optional(Type.String()),
  stream_options: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
  kv_transfer_params: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
};

const message = Type.Object({ role: Type.String(), content: Type.Optional(Type.Unknown()) });

export const ChatCompletionRequest = Type.Object({ ...common, messages: Type.Array(message, { minItems: 1 }) });
export const CompletionRequest = Type.Object({
  ...common,
  prompt: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]),
});
export const EmbeddingRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]),
  user: Type.Optional(Type.String()),
});

export type ChatCompletionRequest = Static<typeof ChatCompletionRequest>;
export type CompletionRequest = Static<typeof CompletionRequest>;
export type EmbeddingRequest = Static<typeof EmbeddingRequest>;

export type Endpoint = "chat" | "completions" | "embeddings";

const checks: Record<Endpoint, TypeCheck<TSchema>> = {
  chat: TypeCompiler.Compile(ChatCompletionRequest),
  completions: TypeCompiler.Compile(CompletionRequest),
  embeddings: TypeCompiler.Compile(EmbeddingRequest),
};

/** Checks a parsed body for an endpoint; returns the first problem as an OpenAI 400. */
export function validateRequest(endpoint: Endpoint, body: unknown): OpenAIError | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return errors.invalidField("body", "Request body must be a JSON object.");
  const check = checks[endpoint];
  if (check.Check(body)) return null;
  const first = check.Errors(body).First();
  if (!first) return errors.invalidField("body", "Invalid request body.");
  const param = first.path.replace(/^\//, "").replace(/\//g, ".") || "body";
  const top = param.split(".")[0]!;
  if (!(top in (body as object))) return errors.missingField(top);
  return errors.invalidField(param, `Invalid value for '${param}': ${first.message}.`);
}

/** Parses JSON text into a body, or an OpenAI 400 saying why not. */
export function parseJson(text: string): { body: Record<string, unknown> } | { error: OpenAIError } {
  try {
    return { body: JSON.parse(text) };
  } catch (e) {
    return { error: errors.invalidJson((e as Error).message) };
  }
}
