/**
 * Passes an upstream body through to the client chunk by chunk (no buffering), and calls
 * `done` exactly once whichever way the stream ends: finished, failed, or cancelled by the client.
 * A client cancel is passed upstream so the engine stops generating.
 */
export function passThrough(
  upstream: ReadableStream<Uint8Array>,
  hooks: { firstByte?: () => void; done: (outcome: "complete" | "error" | "cancelled") => void; abortUpstream: () => void },
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  let finished = false;
  let first = true;
  const finish = (outcome: "complete" | "error" | "cancelled") => {
    if (finished) return;
    finished = true;
    hooks.done(outcome);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            finish("complete");
            controller.close();
            return;
          }
          if (first) {
            first = false;
            hooks.firstByte?.();
          }
          controller.enqueue(value);
        } catch (err) {
          finish("error");
          controller.error(err);
        }
      },
      cancel(reason) {
        finish("cancelled");
        hooks.abortUpstream();
        return reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
