/** OpenAI's error envelope: `{"error":{"message","type","code"}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string | number | null; param?: string | null };
}

export type ErrorKind =
  | "invalid_request_error"
  | "not_found_error"
  | "authentication_error"
  | "service_unavailable"
  | "upstream_error"
  | "timeout_error"
  | "payload_too_large";

export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: ErrorKind,
    readonly code: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }

  toResponse(): Response {
    return new Response(JSON.stringify(this.body()), {
      status: this.status,
      headers: { "content-type": "application/json", ...this.headers },
    });
  }
}

export const errors = {
  invalidJson: (detail: string) => new OpenAIError(400, `Request body is not valid JSON: ${detail}`, "invalid_request_error", "invalid_json"),
  invalidField: (param: string, message: string) => new OpenAIError(400, message, "invalid_request_error", "invalid_value", param),
  missingField: (param: string) => new OpenAIError(400, `'${param}' is a required property`, "invalid_request_error", "missing_required_parameter", param),
  modelNotFound: (model: string) => new OpenAIError(404, `The model '${model}' does not exist or no worker serves it.`, "not_found_error", "model_not_found", "model"),
  noReadyWorker: (model: string, retryAfterSecs: number) =>
    new OpenAIError(503, `No worker is ready to serve '${model}' right now; retry shortly.`, "service_unavailable", "no_ready_worker", "model", {
      "retry-after": String(retryAfterSecs),
    }),
  tooLarge: (limit: number) => new OpenAIError(413, `Request body exceeds the ${limit}-byte limit.`, "invalid_request_error", "payload_too_large"),
  unauthorized: () => new OpenAIError(401, "A valid admin API key is required (Authorization: Bearer <key>).", "authentication_error", "invalid_api_key"),
  notFound: (what: string) => new OpenAIError(404, what, "not_found_error", "not_found"),
  upstream: (detail: string) => new OpenAIError(502, `Upstream engine failed: ${detail}`, "upstream_error", "upstream_error"),
  upstreamTimeout: (secs: number) => new OpenAIError(504, `Upstream engine did not answer within ${secs} s.`, "timeout_error", "upstream_timeout"),
  unsupportedMedia: () => new OpenAIError(415, "Content-Type must be application/json.", "invalid_request_error", "unsupported_media_type"),
};
