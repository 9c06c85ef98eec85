const jsonHeaders = { "content-type": "application/json" };

const typeByStatus: Record<number, string> = {
  400: "BadRequestError",
  404: "NotFoundError",
  500: "InternalServerError",
  501: "NotImplementedError",
  503: "ServiceUnavailableError",
};

/** An error in vLLM's OpenAI-compatible shape: `{"error": {message, type, param, code}}`. */
export function errorResponse(status: number, message: string, param: string | null = null): Response {
  const type = typeByStatus[status] ?? (status >= 500 ? "InternalServerError" : "BadRequestError");
  return new Response(JSON.stringify({ error: { message, type, param, code: status } }), { status, headers: jsonHeaders });
}

export function modelNotFound(model: string): Response {
  return errorResponse(404, `The model \`${model}\` does not exist.`, "model");
}

/** A response whose body fails before the first byte: the client sees its connection reset. */
export function droppedConnection(): Response {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(); // an undefined reason: Bun resets the socket without logging a stack
      },
    }),
  );
}
