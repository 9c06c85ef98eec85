import { journal, type WorkerContext } from "./context";
import type { ProbeResult, WorkerStatus } from "./types";

/**
 * Folds one probe result into the worker's context. Pure: the machine's guards then read the
 * counters to decide the next state.
 */
export function applyProbe(ctx: WorkerContext, status: WorkerStatus, result: ProbeResult): WorkerContext {
  const now = Date.now();
  let next: WorkerContext = {
    ...ctx,
    probeCount: ctx.probeCount + 1,
    pendingProbes: status === "pending" ? ctx.pendingProbes + 1 : ctx.pendingProbes,
    lastProbe: { at: now, healthy: result.healthy, detail: result.detail, latencyMs: result.latencyMs },
  };
  if (!result.healthy) {
    return { ...next, failures: ctx.failures + 1, successes: 0, journal: journal(ctx, "probe", `probe failed: ${result.detail}`) };
  }

  next = applyModels(next, result);
  next = applyIdentity(next, result);
  next = applyIncarnation(next, ctx, result);

  // An engine that answers health but whose models are unknown cannot serve yet.
  if (!next.modelsKnown) {
    return { ...next, failures: ctx.failures + 1, successes: 0, journal: next.journal === ctx.journal ? journal(ctx, "probe", "healthy, but its model list could not be read") : next.journal };
  }
  return { ...next, successes: ctx.successes + 1, failures: 0 };
}

function applyModels(ctx: WorkerContext, result: ProbeResult): WorkerContext {
  if (result.models === undefined) return ctx;
  if (result.models === "failed") return ctx; // keep the last known list
  if (ctx.spec.modelId) return { ...ctx, modelsRefreshRequested: false };
  const before = ctx.models.map((m) => m.id).join(",");
  const after = result.models.map((m) => m.id).join(",");
  const changed = before !== after;
  return {
    ...ctx,
    models: result.models,
    modelsKnown: result.models.length > 0,
    modelsRefreshRequested: false,
    journal: changed ? journal(ctx, "models", `models: [${after}]`) : ctx.journal,
  };
}

function applyIdentity(ctx: WorkerContext, result: ProbeResult): WorkerContext {
  if (result.identity === undefined || ctx.spec.engineIdPinned) return ctx;
  if (result.identity === "failed") {
    // Keep the previous id; it is unconfirmed until a read completes.
    return { ...ctx, engineIdConfirmed: false };
  }
  const { engineId, dataParallelSize } = result.identity;
  // A completed read without an id confirms there is none; it never clears a known id.
  const id = engineId ?? ctx.engineId;
  return {
    ...ctx,
    engineId: id,
    engineIdConfirmed: true,
    dataParallelSize: dataParallelSize ?? ctx.dataParallelSize,
    journal: id !== ctx.engineId ? journal(ctx, "identity", `engine id ${ctx.engineId ?? "none"} → ${id}`) : ctx.journal,
  };
}

/** A changed incarnation is a restart, even if no probe ever failed. */
function applyIncarnation(next: WorkerContext, before: WorkerContext, result: ProbeResult): WorkerContext {
  const seen = result.incarnation ?? (typeof result.identity === "object" ? result.identity.incarnation : null) ?? null;
  if (seen === null) return next;
  if (before.incarnation === null || before.incarnation === seen) return { ...next, incarnation: seen };
  // A new process that has not (yet) named an engine id does not confirm the old process's id:
  // the id is kept (never cleared) but stays unconfirmed, so the next probe reads it again.
  const newIdRead = typeof result.identity === "object" && (result.identity.engineId !== null || before.engineId === null);
  return {
    ...next,
    incarnation: seen,
    restarts: before.restarts + 1,
    // Whatever was not re-read in this probe is re-read on the next one.
    engineIdConfirmed: newIdRead ? next.engineIdConfirmed : false,
    modelsRefreshRequested: result.models === undefined || result.models === "failed" ? true : next.modelsRefreshRequested,
    journal: journal(before, "restart", `engine restarted in place: incarnation ${before.incarnation} → ${seen}, engine id ${before.engineId ?? "none"} → ${next.engineId ?? "none"}`),
  };
}
