import { GoneError, ListError, WatchError, type KubeErrorReason } from "./errors.ts";

/** The `Status` object the API server sends with failures and in ERROR watch events. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

export function parseStatus(text: string): KubeStatus | null {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as KubeStatus) : null;
  } catch {
    return null;
  }
}

export function reasonForHttpStatus(status: number): KubeErrorReason {
  if (status === 410) return "gone";
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  return "http";
}

/** A non-2xx response as the typed error of the operation that got it. */
export function errorForStatus(op: "list" | "watch", status: number, body: string): GoneError | ListError | WatchError {
  const st = parseStatus(body);
  const detail = `HTTP ${status}${st?.reason ? ` ${st.reason}` : ""}${st?.message ? `: ${st.message}` : body && !st ? `: ${body.slice(0, 200)}` : ""}`;
  if (status === 410) return new GoneError(op, detail);
  const Ctor = op === "list" ? ListError : WatchError;
  return new Ctor(op, reasonForHttpStatus(status), detail, status);
}
