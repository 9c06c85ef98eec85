/**
 * Delay before reconnect number `attempt` (0 = the first after a healthy sync): the ceiling
 * doubles from `initialMs` up to `capMs`, and the delay is drawn from its upper half, so the
 * first retry is quick (100–200 ms by default) and many routers losing the API server together
 * do not come back in step.
 */
export function reconnectDelay(attempt: number, initialMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, initialMs * 2 ** Math.min(attempt, 30));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(ceiling / 2 + (r * ceiling) / 2);
}
