import type { ActorSystem, AnyActorRef } from "xstate";

/**
 * xstate 5 keeps every delayed event of an actor system in one table, and each actor that stops
 * (every finished probe is an actor that stops) scans the whole table for its own events. With a
 * worker per engine, each waiting on an `after` delay, that is O(workers) per probe and O(workers²)
 * per probe round: 81 % of an idle gateway's CPU at 5,000 workers (bench/proxy, cpu profile).
 *
 * This keeps the table indexed by the actor that scheduled each event, so stopping an actor only
 * looks at its own events. What is scheduled, cancelled and fired is unchanged: it wraps the
 * system's own `schedule` and replaces `cancelAll` with the same effect. Idempotent per system.
 * Built against xstate 5.33's scheduler shape (`system.scheduler.{schedule,cancel,cancelAll}`);
 * if that shape is not there, it leaves the system alone.
 */
interface Scheduler {
  schedule(source: AnyActorRef, target: AnyActorRef, event: unknown, delay: number, id?: string): void;
  cancel(source: AnyActorRef, id: string): void;
  cancelAll(actorRef: AnyActorRef): void;
}

const indexed = new WeakSet<object>();

export function indexScheduler(system: ActorSystem<any>): void {
  const scheduler = (system as unknown as { scheduler?: Scheduler }).scheduler;
  if (!scheduler || indexed.has(scheduler)) return;
  if (typeof scheduler.schedule !== "function" || typeof scheduler.cancel !== "function" || typeof scheduler.cancelAll !== "function") return;
  indexed.add(scheduler);
  const schedule = scheduler.schedule.bind(scheduler);
  /** sessionId → ids of the events it scheduled (some may have fired since: cancelling those is a no-op). */
  const bySource = new Map<string, Set<string>>();
  const pending = () => (system as unknown as { _snapshot?: { _scheduledEvents?: Record<string, { source?: AnyActorRef; id?: string }> } })._snapshot?._scheduledEvents;
  const note = (sessionId: string, id: string) => {
    let ids = bySource.get(sessionId);
    if (!ids) bySource.set(sessionId, (ids = new Set()));
    ids.add(id);
    return ids;
  };
  // Events scheduled before this call are indexed too, so every one stays cancellable.
  for (const e of Object.values(pending() ?? {})) if (e.source && e.id !== undefined) note(e.source.sessionId, e.id);

  scheduler.schedule = (source, target, event, delay, id = Math.random().toString(36).slice(2)) => {
    const ids = note(source.sessionId, id);
    if (ids.size > 4) {
      // Forget events that have fired, so a long-lived actor's set stays a handful.
      const table = pending();
      if (table) for (const old of ids) if (old !== id && !(`${source.sessionId}.${old}` in table)) ids.delete(old);
    }
    schedule(source, target, event, delay, id);
  };

  scheduler.cancelAll = (actorRef) => {
    const ids = bySource.get(actorRef.sessionId);
    if (!ids) return;
    bySource.delete(actorRef.sessionId);
    for (const id of ids) scheduler.cancel(actorRef, id);
  };
}
