import type { LiveDelta, LiveSnapshot, MachinesDocument } from "./wire";

export type ConnectionState = "connecting" | "live" | "reconnecting" | "unauthorized" | "unreachable";

export interface GatewayClient {
  /** `/machine` and `/live` of the gateway, with the token when one is given. */
  url(path: string): string;
  machine(): Promise<MachinesDocument>;
}

export function gatewayClient(base: string, token: string | null): GatewayClient {
  const root = base.replace(/\/+$/, "");
  const url = (path: string) => `${root}${path}${token ? `?token=${encodeURIComponent(token)}` : ""}`;
  return {
    url,
    async machine() {
      const res = await fetch(url("/machine"), { signal: AbortSignal.timeout(10_000) });
      if (res.status === 401) throw new Unauthorized();
      if (!res.ok) throw new Error(`GET /machine answered ${res.status}`);
      return (await res.json()) as MachinesDocument;
    },
  };
}

export class Unauthorized extends Error {
  constructor() {
    super("the gateway wants its admin key: open this page with ?token=<key>");
  }
}

export interface StreamHandlers {
  snapshot(s: LiveSnapshot): void;
  delta(d: LiveDelta): void;
  state(s: ConnectionState): void;
}

/**
 * Follows GET /live. EventSource reconnects by itself after a dropped connection (each reconnect
 * starts with a fresh snapshot); when the gateway refuses outright, the page asks /machine why
 * and tries again a little later.
 */
export function follow(client: GatewayClient, on: StreamHandlers): () => void {
  let source: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  const open = () => {
    if (stopped) return;
    source = new EventSource(client.url("/live"));
    source.addEventListener("snapshot", (ev) => {
      on.state("live");
      on.snapshot(JSON.parse((ev as MessageEvent<string>).data) as LiveSnapshot);
    });
    source.addEventListener("delta", (ev) => on.delta(JSON.parse((ev as MessageEvent<string>).data) as LiveDelta));
    source.onerror = () => {
      if (source?.readyState === EventSource.CONNECTING) {
        on.state("reconnecting");
        return;
      }
      // Closed for good (an error status): find out whether it is the key, then retry.
      source?.close();
      client.machine().then(
        () => on.state("reconnecting"),
        (e) => on.state(e instanceof Unauthorized ? "unauthorized" : "unreachable"),
      );
      retry = setTimeout(open, 3000);
    };
  };
  on.state("connecting");
  open();
  return () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    source?.close();
  };
}
