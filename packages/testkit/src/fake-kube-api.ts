import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { KubeObject } from "./kube-objects.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { createTestPki, type TestPki } from "./pki.ts";
import { parseRoute, status, type Route } from "./fake-kube/routes.ts";
import { SelectorError, parseFieldSelector, parseLabelSelector, type Matcher } from "./fake-kube/selectors.ts";
import { ExpiredError, FakeStore, RESOURCE_KINDS, objectKey, type FakeResource } from "./fake-kube/store.ts";
import { type Chunking, WatchStream } from "./fake-kube/watch-stream.ts";

export type { FakeResource } from "./fake-kube/store.ts";
export type { Chunking } from "./fake-kube/watch-stream.ts";

/** How an expired resourceVersion is reported to a new watch. */
export type GoneMode = "http" | "event";

export interface FakeKubeApiOptions {
  /** Namespace the helpers use when an object names none. Default "default". */
  namespace?: string;
  /** Accepted bearer tokens. Default ["fake-kube-token"]. */
  tokens?: string[];
  goneMode?: GoneMode;
  /** Reuse certificates; by default a fresh PKI is generated and removed on close. */
  pki?: TestPki;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  /** How the request authenticated: bearer token, client certificate, or not at all. */
  auth: "token" | "cert" | null;
  kind: "list" | "watch" | "get" | "other";
  status: number;
}

type Mutator = (obj: KubeObject) => KubeObject | void;

/**
 * A Kubernetes API server stand-in on 127.0.0.1 over TLS, speaking the real list/watch
 * protocol for pods, services and endpointslices, with controls to break it on purpose.
 */
export class FakeKubeApi {
  readonly store: FakeStore;
  readonly requests: RequestRecord[] = [];
  listCount = 0;
  watchCount = 0;
  goneMode: GoneMode;
  /** Called for every request before it is served: tests change the world at exact points. */
  onRequest: ((r: RequestRecord) => void) | null = null;
  private tokens: Set<string>;
  private chunking: Chunking | null = null;
  private blind = false;
  private readonly streams = new Set<WatchStream>();
  private readonly sockets = new Set<Socket>();
  private readonly failures: { op: "list" | "watch"; status: number }[] = [];
  private server: https.Server;
  private _port = 0;
  private kubeconfigs = 0;

  private constructor(
    readonly pki: TestPki,
    private readonly ownsPki: boolean,
    readonly namespace: string,
    tokens: string[],
    goneMode: GoneMode,
  ) {
    this.store = new FakeStore(namespace);
    this.tokens = new Set(tokens);
    this.goneMode = goneMode;
    this.server = https.createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.caCert, requestCert: true, rejectUnauthorized: false },
      (req, res) => this.handle(req, res),
    );
    this.server.on("connection", (s: Socket) => this.track(s));
    this.server.on("secureConnection", (s: Socket) => this.track(s));
    this.store.onChange((c) => {
      for (const s of this.streams) s.sendChange(c);
    });
  }

  static async start(opts: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
    const pki = opts.pki ?? createTestPki();
    const api = new FakeKubeApi(pki, !opts.pki, opts.namespace ?? "default", opts.tokens ?? ["fake-kube-token"], opts.goneMode ?? "http");
    await api.listen(0);
    return api;
  }

  get port(): number {
    return this._port;
  }
  get url(): string {
    return `https://127.0.0.1:${this._port}`;
  }
  /** The first accepted bearer token. */
  get token(): string {
    return [...this.tokens][0] ?? "";
  }
  get resourceVersion(): string {
    return String(this.store.rv);
  }
  get openWatchCount(): number {
    return this.streams.size;
  }

  /** Writes a kubeconfig for this server: client-cert auth, token auth, or none (for 401 tests). */
  kubeconfig(opts: { auth?: "cert" | "token" | "none"; namespace?: string; ca?: string; path?: string } = {}): string {
    const auth = opts.auth ?? "cert";
    return writeKubeconfig({
      server: this.url,
      ca: opts.ca ?? this.pki.caCert,
      ...(auth === "cert" ? { cert: this.pki.clientCert, key: this.pki.clientKey } : {}),
      ...(auth === "token" ? { token: this.token } : {}),
      namespace: opts.namespace ?? this.namespace,
      // Inside the PKI dir, so it goes away with the certificates.
      path: opts.path ?? `${this.pki.dir}/kubeconfig-${++this.kubeconfigs}`,
    });
  }

  // ---- objects -------------------------------------------------------------------------

  create(resource: FakeResource, obj: KubeObject): KubeObject {
    return this.store.create(resource, obj);
  }
  update(resource: FakeResource, name: string, mutate: Mutator, namespace?: string): KubeObject {
    return this.store.update(resource, name, mutate, namespace);
  }
  delete(resource: FakeResource, name: string, namespace?: string): KubeObject | undefined {
    return this.store.delete(resource, name, namespace);
  }
  get(resource: FakeResource, name: string, namespace?: string): KubeObject | undefined {
    return this.store.get(resource, name, namespace);
  }
  /** The truth: every current object of a resource (all namespaces). */
  objects(resource: FakeResource): KubeObject[] {
    return this.store.current(resource);
  }

  createPod = (pod: KubeObject) => this.create("pods", pod);
  updatePod = (name: string, mutate: Mutator, namespace?: string) => this.update("pods", name, mutate, namespace);
  deletePod = (name: string, namespace?: string) => this.delete("pods", name, namespace);
  pods = () => this.objects("pods");
  createService = (svc: KubeObject) => this.create("services", svc);
  updateService = (name: string, mutate: Mutator, namespace?: string) => this.update("services", name, mutate, namespace);
  deleteService = (name: string, namespace?: string) => this.delete("services", name, namespace);
  services = () => this.objects("services");
  createEndpointSlice = (slice: KubeObject) => this.create("endpointslices", slice);
  updateEndpointSlice = (name: string, mutate: Mutator, namespace?: string) =>
    this.update("endpointslices", name, mutate, namespace);
  deleteEndpointSlice = (name: string, namespace?: string) => this.delete("endpointslices", name, namespace);
  endpointSlices = () => this.objects("endpointslices");

  // ---- faults --------------------------------------------------------------------------

  /** Cuts every open watch connection mid-stream (no clean end). Returns how many. */
  dropWatches(): number {
    const n = this.streams.size;
    for (const s of [...this.streams]) s.drop();
    return n;
  }

  /**
   * "The router is blind": true stops listening (new connections are refused) and cuts every
   * open connection, watches included; false listens again on the same port.
   */
  async setBlind(blind: boolean): Promise<void> {
    if (blind === this.blind) return;
    this.blind = blind;
    if (blind) {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.dropWatches();
      for (const s of this.sockets) s.destroy();
      await Promise.race([closed, Bun.sleep(2_000)]);
    } else {
      await this.listen(this._port);
    }
  }

  /** Writes text as-is to every open watch (a newline is added unless `newline: false`). */
  injectRawEvent(text: string, opts: { pieces?: number; delayMs?: number; newline?: boolean } = {}): number {
    const line = opts.newline === false || text.endsWith("\n") ? text : `${text}\n`;
    const cut = opts.pieces ? { pieces: opts.pieces, delayMs: opts.delayMs ?? 5 } : undefined;
    for (const s of this.streams) s.write(line, cut);
    return this.streams.size;
  }

  /** Sends a BOOKMARK at the current resourceVersion to watches that allowed bookmarks. */
  sendBookmark(): number {
    let n = 0;
    for (const s of this.streams) {
      if (!s.bookmarks) continue;
      s.sendBookmark(this.store.rv);
      n++;
    }
    return n;
  }

  /** Forgets history up to now: watches or continue tokens from older versions get 410. */
  compact(): void {
    this.store.compact();
  }

  /** Ends every open watch with an ERROR event carrying a 410 Status (history expired mid-watch). */
  expireWatches(): number {
    const n = this.streams.size;
    for (const s of [...this.streams]) {
      s.sendEvent("ERROR", status(410, "Expired", `too old resource version: ${this.store.compactedRv}`));
      s.end();
    }
    return n;
  }

  /** Answers the next `count` list or watch requests with `status` (410 on a watch follows goneMode). */
  failNext(op: "list" | "watch", httpStatus: number, count = 1): void {
    for (let i = 0; i < count; i++) this.failures.push({ op, status: httpStatus });
  }

  setGoneMode(mode: GoneMode): void {
    this.goneMode = mode;
  }

  /** Cuts every event write into `pieces` parts `delayMs` apart (null: whole lines). */
  setChunking(chunking: Chunking | null): void {
    this.chunking = chunking;
  }

  /** Replaces the accepted bearer tokens (token rotation). */
  setTokens(tokens: string[]): void {
    this.tokens = new Set(tokens);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropWatches();
    for (const s of this.sockets) s.destroy();
    await Promise.race([closed, Bun.sleep(2_000)]);
    if (this.ownsPki) this.pki.cleanup();
  }

  // ---- protocol ------------------------------------------------------------------------

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject);
        this._port = (this.server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  private track(s: Socket): void {
    if (this.sockets.has(s)) return;
    this.sockets.add(s);
    s.once("close", () => this.sockets.delete(s));
  }

  private authenticate(req: IncomingMessage): RequestRecord["auth"] {
    const header = req.headers.authorization ?? "";
    if (header.startsWith("Bearer ") && this.tokens.has(header.slice(7).trim())) return "token";
    if ((req.socket as TLSSocket).authorized === true) return "cert";
    return null;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.track(req.socket);
    if (this.blind) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? "/", this.url);
    const route = parseRoute(url.pathname);
    const isWatch = ["1", "true"].includes(url.searchParams.get("watch") ?? "");
    const record: RequestRecord = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.search,
      auth: this.authenticate(req),
      kind: !route ? "other" : route.name ? "get" : isWatch ? "watch" : "list",
      status: 0,
    };
    this.requests.push(record);
    this.onRequest?.(record);
    const reply = (code: number, body: unknown) => {
      record.status = code;
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (!record.auth) return reply(401, status(401, "Unauthorized", "Unauthorized"));
    if (!route) return reply(404, status(404, "NotFound", "the server could not find the requested resource"));
    if (record.method !== "GET") return reply(405, status(405, "MethodNotAllowed", "the fake only reads"));
    let labels: Matcher;
    let fields: Matcher;
    try {
      labels = parseLabelSelector(url.searchParams.get("labelSelector"));
      fields = parseFieldSelector(url.searchParams.get("fieldSelector"));
    } catch (err) {
      if (err instanceof SelectorError) return reply(400, status(400, "BadRequest", err.message));
      throw err;
    }
    if (route.name) {
      const obj = this.store.get(route.resource, route.name, route.namespace ?? this.namespace);
      return obj ? reply(200, obj) : reply(404, status(404, "NotFound", `${route.resource} "${route.name}" not found`));
    }
    if (record.kind === "list") {
      this.listCount++;
      const forced = this.takeFailure("list");
      if (forced) return reply(forced, status(forced, reasonFor(forced), "injected failure"));
      return this.serveList(route, url.searchParams, (o) => inNamespace(route, o) && labels(o) && fields(o), reply);
    }
    this.watchCount++;
    this.serveWatch(route, url.searchParams, labels, fields, res, record, reply);
  }

  private takeFailure(op: "list" | "watch"): number | undefined {
    const i = this.failures.findIndex((f) => f.op === op);
    return i < 0 ? undefined : this.failures.splice(i, 1)[0].status;
  }

  private serveList(
    route: Route,
    q: URLSearchParams,
    wanted: (o: KubeObject) => boolean,
    reply: (code: number, body: unknown) => void,
  ): void {
    const limit = Number(q.get("limit") ?? 0) || 0;
    const cont = q.get("continue");
    let rv = this.store.rv;
    let after: string | undefined;
    let source: KubeObject[];
    if (cont) {
      let token: { rv: number; after: string };
      try {
        token = JSON.parse(Buffer.from(cont, "base64url").toString());
      } catch {
        return reply(400, status(400, "BadRequest", "invalid continue token"));
      }
      try {
        source = this.store.snapshotAt(route.resource, token.rv);
      } catch (err) {
        if (!(err instanceof ExpiredError)) throw err;
        return reply(410, status(410, "Expired", "The provided continue parameter is too old to display a consistent list result."));
      }
      rv = token.rv;
      after = token.after;
    } else {
      source = this.store.current(route.resource);
    }
    let items = source.filter((o) => wanted(o) && (after === undefined || objectKey(o) > after));
    let next: string | undefined;
    let remaining = 0;
    if (limit > 0 && items.length > limit) {
      remaining = items.length - limit;
      items = items.slice(0, limit);
      next = Buffer.from(JSON.stringify({ rv, after: objectKey(items[items.length - 1]) })).toString("base64url");
    }
    const { kind, apiVersion } = RESOURCE_KINDS[route.resource];
    reply(200, {
      kind: `${kind}List`,
      apiVersion,
      metadata: { resourceVersion: String(rv), ...(next ? { continue: next, remainingItemCount: remaining } : {}) },
      // Items in a real list carry no kind/apiVersion.
      items: items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
    });
  }

  private serveWatch(
    route: Route,
    q: URLSearchParams,
    labels: Matcher,
    fields: Matcher,
    res: ServerResponse,
    record: RequestRecord,
    reply: (code: number, body: unknown) => void,
  ): void {
    const rvParam = q.get("resourceVersion") ?? "";
    const forced = this.takeFailure("watch");
    if (forced && forced !== 410) return reply(forced, status(forced, reasonFor(forced), "injected failure"));
    if (forced === 410) return this.gone(res, record, `too old resource version: ${rvParam} (${this.store.rv})`);
    // "" and "0" mean "from any point": the current objects arrive as ADDED first.
    const fromRv = rvParam === "" || rvParam === "0" ? undefined : Number(rvParam);
    if (fromRv !== undefined && !(Number.isInteger(fromRv) && fromRv > 0)) {
      return reply(400, status(400, "BadRequest", `invalid resource version ${JSON.stringify(rvParam)}`));
    }
    let replay: ReturnType<FakeStore["changesSince"]> = [];
    if (fromRv !== undefined) {
      try {
        replay = this.store.changesSince(route.resource, fromRv);
      } catch (err) {
        if (!(err instanceof ExpiredError)) throw err;
        return this.gone(res, record, err.message);
      }
    }
    record.status = 200;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private" });
    res.flushHeaders(); // a real API server sends headers at once, before any event
    const stream: WatchStream = new WatchStream(
      res,
      { resource: route.resource, namespace: route.namespace, labels, fields },
      q.get("allowWatchBookmarks") === "true",
      () => this.chunking,
      () => this.streams.delete(stream),
    );
    if (fromRv === undefined) {
      for (const obj of this.store.current(route.resource)) {
        stream.sendChange({ rv: this.store.rv, resource: route.resource, type: "ADDED", object: obj });
      }
    } else {
      for (const c of replay) stream.sendChange(c);
    }
    this.streams.add(stream);
    const timeoutSeconds = Number(q.get("timeoutSeconds") ?? 0);
    if (timeoutSeconds > 0) {
      const timer = setTimeout(() => stream.end(), timeoutSeconds * 1000);
      res.on("close", () => clearTimeout(timer));
    }
  }

  private gone(res: ServerResponse, record: RequestRecord, message: string): void {
    const body = status(410, "Expired", message);
    if (this.goneMode === "http") {
      record.status = 410;
      res.writeHead(410, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
      return;
    }
    record.status = 200;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`${JSON.stringify({ type: "ERROR", object: body })}\n`);
  }
}

export function startFakeKubeApi(opts: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  return FakeKubeApi.start(opts);
}

function inNamespace(route: Route, o: KubeObject): boolean {
  return route.namespace === undefined || o.metadata.namespace === route.namespace;
}

function reasonFor(code: number): string {
  return (
    { 400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "Expired", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable" }[code] ??
    "Unknown"
  );
}
