/**
 * A concurrency limit with a FIFO queue: what makes `num_requests_waiting` non-zero under load.
 * Counts are reported through `onChange` so the engine state stays the single place they live.
 * One per engine incarnation: a restart starts a fresh one and the old one's requests are cut.
 */
export class Scheduler {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    private readonly maxConcurrency: number,
    private readonly onChange: (running: number, waiting: number) => void,
  ) {}

  /** Waits for a slot. False when `signal` fired first (the request left the queue). */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.running < this.maxConcurrency) {
      this.running++;
      this.report();
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const admit = () => {
        signal.removeEventListener("abort", leave);
        resolve(true);
      };
      const leave = () => {
        const i = this.queue.indexOf(admit);
        if (i >= 0) this.queue.splice(i, 1);
        this.report();
        resolve(false);
      };
      this.queue.push(admit);
      signal.addEventListener("abort", leave, { once: true });
      this.report();
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next(); // the slot passes straight to the next in line
    else this.running--;
    this.report();
  }

  private report(): void {
    this.onChange(this.running, this.queue.length);
  }
}
