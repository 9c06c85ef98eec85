import { adminDiscovery, type DesiredWorker, type SourceStatus } from "@switchboard/discovery";
import { grpcProbe, httpProbe } from "@switchboard/engines";
import {
  boundedProbe,
  indexScheduler,
  workerMachine,
  type ConnectionMode,
  type HealthConfig,
  type ProbeFn,
  type WorkerEvent,
  type WorkerSnapshot,
  type WorkerSpec,
} from "@switchboard/workers";
import { createActor, fromPromise, type Actor, type AnyActorRef, type InspectionEvent, type Subscription } from "xstate";
import { fleetMachine, newWorkerId, type FleetContext, type SourceConfig } from "./fleet-machine";
import { LoadScraper, type LoadScraperOptions } from "./load-scraper";
import { WorkerIndex } from "./worker-index";
import { WorkerView } from "./worker-view";

export const ADMIN_SOURCE = "admin";

export interface FleetOptions {
  health: HealthConfig;
  sources: SourceConfig[];
  /** Probes by transport (defaults: HTTP and gRPC engine probes). */
  probes?: Partial<Record<ConnectionMode, ProbeFn>>;
  /** xstate inspection, e.g. for the live stream and the Stately inspector. */
  inspect?: (event: InspectionEvent) => void;
  /** Keep Ready workers' engineLoad fresh from the engines' own numbers; off when absent or intervalMs is 0. */
  loadScrape?: LoadScraperOptions;
}

/**
 * The actor system behind the gateway: the fleet machine, its discovery and worker actors,
 * and the index that follows worker snapshots. The gateway reads `index`; it sends actors
 * nothing on the request path except the rare passive-failure report.
 */
export class Fleet {
  readonly index = new WorkerIndex();
  /** Present when load scraping is on. */
  readonly loads?: LoadScraper;
  private readonly root: Actor<typeof fleetMachine>;
  private readonly watched = new Map<string, Subscription>();
  private rootSub?: Subscription;

  constructor(private readonly opts: FleetOptions) {
    const probes = { http: httpProbe, grpc: grpcProbe, ...opts.probes };
    const probe: ProbeFn = (req) => probes[req.spec.connectionMode](req);
    const worker = workerMachine.provide({
      actors: {
        probe: boundedProbe(probe),
        waitForIdle: fromPromise(({ input, signal }) => this.waitForIdle(input.workerId, input.timeoutMs, signal)),
      },
    });
    const sources: SourceConfig[] = [{ id: ADMIN_SOURCE, logic: adminDiscovery, input: { source: ADMIN_SOURCE } }, ...opts.sources];
    this.root = createActor(fleetMachine.provide({ actors: { worker } }), {
      input: { health: opts.health, sources },
      inspect: opts.inspect,
    });
    // Each finished probe stops an actor; with the scheduler indexed that costs O(1), not O(workers).
    indexScheduler(this.root.system);
    if (opts.loadScrape && opts.loadScrape.intervalMs > 0) this.loads = new LoadScraper(this.index, opts.loadScrape);
  }

  start(): this {
    this.rootSub = this.root.subscribe((snap) => this.follow(snap.context, snap.children as Record<string, AnyActorRef | undefined>));
    this.root.start();
    const snap = this.root.getSnapshot();
    this.follow(snap.context, snap.children as Record<string, AnyActorRef | undefined>);
    this.loads?.start();
    return this;
  }

  stop() {
    void this.loads?.stop(); // reads in flight are cut at once
    this.rootSub?.unsubscribe();
    for (const s of this.watched.values()) s.unsubscribe();
    this.watched.clear();
    this.root.stop();
  }

  get health(): HealthConfig {
    return this.opts.health;
  }

  /** Keeps one subscription per live worker actor and the index in step with the fleet's worker set. */
  private follow(ctx: FleetContext, children: Record<string, AnyActorRef | undefined>) {
    for (const id of Object.keys(ctx.workers)) {
      if (this.watched.has(id)) continue;
      const ref = children[id];
      if (!ref) continue;
      this.index.add(new WorkerView(ctx.workers[id]!.spec));
      const sub = ref.subscribe({
        next: (s: WorkerSnapshot) => this.index.applySnapshot(id, s),
        complete: () => queueMicrotask(() => this.root.send({ type: "fleet.workerDone", id })),
        error: () => queueMicrotask(() => this.root.send({ type: "fleet.workerDone", id })),
      });
      this.watched.set(id, sub);
      this.index.applySnapshot(id, ref.getSnapshot());
    }
    for (const [id, sub] of this.watched) {
      if (ctx.workers[id]) continue;
      sub.unsubscribe();
      this.watched.delete(id);
      this.index.remove(id);
    }
  }

  private async waitForIdle(id: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!signal.aborted && Date.now() < until) {
      const v = this.index.get(id);
      if (!v || v.inFlight <= 0) return;
      await Bun.sleep(25);
    }
  }

  private worker(id: string): AnyActorRef | undefined {
    return (this.root.getSnapshot().children as Record<string, AnyActorRef | undefined>)[id];
  }

  /** Registers (or re-registers) a worker through the admin source; returns its id at once. */
  register(worker: Omit<DesiredWorker, "source" | "sourceKey" | "id">): string {
    const id = newWorkerId();
    const desired: DesiredWorker = { ...worker, id, source: ADMIN_SOURCE, sourceKey: `${worker.url}#${id}` };
    this.worker(ADMIN_SOURCE)?.send({ type: "admin.register", worker: desired });
    return id;
  }

  /** Labels and priority only; nothing else about the worker changes. */
  patch(id: string, patch: Partial<Pick<WorkerSpec, "labels" | "priority">>): boolean {
    const view = this.index.get(id);
    if (!view) return false;
    if (view.spec.source === ADMIN_SOURCE) this.worker(ADMIN_SOURCE)?.send({ type: "admin.patch", url: view.url, patch });
    this.root.send({ type: "fleet.update", id, patch });
    return true;
  }

  /** Drain, then remove. */
  drain(id: string, reason: string): boolean {
    const view = this.index.get(id);
    if (!view) return false;
    this.root.send({ type: "fleet.drain", id, reason });
    if (view.spec.source === ADMIN_SOURCE) this.worker(ADMIN_SOURCE)?.send({ type: "admin.forget", url: view.url });
    return true;
  }

  /** A request could not connect to the worker: it leaves rotation now. */
  passiveFailure(id: string, detail: string) {
    const view = this.index.get(id);
    if (!view || view.status !== "ready") return;
    this.worker(id)?.send({ type: "worker.passiveFailure", detail } satisfies WorkerEvent);
  }

  sources(): SourceStatus[] {
    return Object.values(this.root.getSnapshot().context.sourceStatus);
  }

  /** The root actor, for inspection tooling. */
  get actor() {
    return this.root;
  }
}
