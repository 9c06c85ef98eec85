import pino, { type Logger } from "pino";
import type { WorkerIndex } from "@switchboard/fleet";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { svc: "switchboard" }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** One log line per thing an operator needs at 3 a.m.: workers coming, going, changing state, restarting. */
export function logWorkerChanges(index: WorkerIndex, log: Logger) {
  index.onChange((c) => {
    const w = { worker: c.view.id, url: c.view.url, source: c.view.spec.source };
    switch (c.kind) {
      case "added":
        log.info(w, "worker added");
        break;
      case "removed":
        log.info(w, "worker removed");
        break;
      case "status":
        (c.to === "ready" || c.to === "pending" ? log.info : log.warn).call(log, { ...w, from: c.from, to: c.to, reason: c.view.reason }, `worker ${c.from} → ${c.to}`);
        break;
      case "restarted":
        log.warn({ ...w, from: c.from, to: c.to, engine_id: c.view.engineId, restarts: c.view.restarts }, "engine restarted in place");
        break;
      case "journal":
        if (c.view.journal && c.view.journal.kind !== "transition") log.debug({ ...w, kind: c.view.journal.kind }, c.view.journal.message);
        break;
    }
  });
}
