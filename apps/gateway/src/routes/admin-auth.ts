import { errors } from "@switchboard/protocol";

/** With --admin-api-key, writes (and the live stream) need `Authorization: Bearer <key>`. */
export function adminGuard(key: string | undefined) {
  return (request: Request): Response | null => {
    if (!key) return null;
    const header = request.headers.get("authorization") ?? "";
    const url = new URL(request.url);
    // EventSource cannot send headers: the live stream may carry the key as ?token=.
    const given = header.startsWith("Bearer ") ? header.slice(7) : url.searchParams.get("token");
    if (given !== null && timingSafeEqual(given, key)) return null;
    return errors.unauthorized().toResponse();
  };
}

function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
