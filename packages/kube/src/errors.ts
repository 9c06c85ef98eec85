/** Why a Kubernetes request failed; callers branch on this, logs print it. */
export type KubeErrorReason =
  | "config" // no usable config, or one we refuse (skipTLSVerify over https)
  | "connect" // refused, reset or unreachable before a response
  | "tls" // certificate verification or handshake failed
  | "timeout" // list deadline or watch connect deadline passed
  | "aborted" // the caller's signal fired
  | "unauthorized" // HTTP 401
  | "forbidden" // HTTP 403
  | "http" // any other non-2xx status
  | "gone" // HTTP 410 or an ERROR event with code 410: list again
  | "malformed" // a response body that is not the JSON we expect
  | "error-event" // an ERROR watch event other than 410
  | "dropped" // the watch stream broke mid-way
  | "idle"; // the watch stream went silent past its idle bound

export type KubeOp = "config" | "request" | "list" | "watch";

export class KubeError extends Error {
  override name = "KubeError";
  constructor(
    readonly op: KubeOp,
    readonly reason: KubeErrorReason,
    /** What happened, without the op/reason prefix the message carries. */
    readonly detail: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${op} ${reason}: ${detail}`, options);
  }
}

/** The requested resourceVersion is no longer available (HTTP 410 or ERROR event 410): list again. */
export class GoneError extends KubeError {
  override name = "GoneError";
  constructor(op: KubeOp, message: string, options?: { cause?: unknown }) {
    super(op, "gone", message, 410, options);
  }
}

export class ListError extends KubeError {
  override name = "ListError";
}

export class WatchError extends KubeError {
  override name = "WatchError";
}

/** Re-labels a request-level error as a list/watch error, keeping its reason. */
export function asOpError(op: "list" | "watch", err: unknown): KubeError {
  if (err instanceof GoneError) return err.op === op ? err : new GoneError(op, err.detail, { cause: err });
  const Ctor = op === "list" ? ListError : WatchError;
  if (err instanceof KubeError) {
    if (err instanceof Ctor) return err;
    return new Ctor(op, err.reason, err.detail, err.status, { cause: err });
  }
  return new Ctor(op, "connect", errorText(err), undefined, { cause: err });
}

const TLS_CODE = /CERT|TLS|SSL|SIGNATURE|ISSUER|HANDSHAKE/i;

/** Maps a thrown fetch error to a reason: Bun reports socket and certificate failures through `code`. */
export function classifyFetchError(err: unknown): KubeErrorReason {
  const code = String((err as { code?: unknown } | null)?.code ?? "");
  if (TLS_CODE.test(code)) return "tls";
  return "connect";
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return code && !err.message.includes(String(code)) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
