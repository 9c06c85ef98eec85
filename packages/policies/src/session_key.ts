/**
 * The session a request belongs to, for consistent_hash. Most specific first: the operator's
 * configured header, then `X-Session-ID`, `X-User-ID`, then the body's `session_id` and `user`.
 * Blank values do not count. Returns undefined when there is none.
 */
export function sessionKeyFrom(
  headers: Headers | Record<string, string | undefined>,
  body: unknown,
  extraHeader?: string,
): string | undefined {
  const header = (name: string) => nonBlank(headerValue(headers, name));
  const fromHeaders =
    (extraHeader ? header(extraHeader) : undefined) ?? header("x-session-id") ?? header("x-user-id");
  if (fromHeaders !== undefined) return fromHeaders;
  if (body === null || typeof body !== "object") return undefined;
  const b = body as Record<string, unknown>;
  return scalar(b.session_id) ?? scalar(b.user);
}

function headerValue(headers: Headers | Record<string, string | undefined>, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const exact = headers[name];
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  for (const k in headers) if (k.toLowerCase() === lower) return headers[k];
  return undefined;
}

function nonBlank(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === "" ? undefined : t;
}

function scalar(v: unknown): string | undefined {
  if (typeof v === "string") return nonBlank(v);
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}
