import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningGateway } from "../src";
import { Harness, testConfig } from "./harness";
import { SseReader } from "./live-sse";

const KEY = "s3cret-admin-key";
const h = new Harness();
let gw: RunningGateway;
const readers: SseReader[] = [];

beforeAll(async () => {
  const e = await h.engine();
  gw = h.gateway(testConfig(["--worker-urls", e.url, "--admin-api-key", KEY]));
});
afterAll(async () => {
  for (const r of readers) r.close();
  await h.close();
});

async function live(query = "", headers: Record<string, string> = {}) {
  const r = await SseReader.open(`${gw.url}/live${query}`, headers);
  readers.push(r);
  return r;
}

describe("with --admin-api-key", () => {
  test("the live stream refuses a missing or wrong key, with CORS so a page can tell", async () => {
    for (const [q, hdr] of [["", {}], ["?token=wrong", {}], ["", { authorization: "Bearer wrong" }]] as const) {
      const r = await live(q, hdr);
      expect(r.response.status).toBe(401);
      expect(r.response.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  test("the live stream takes the key as ?token= (EventSource) or as a Bearer header", async () => {
    for (const r of [await live(`?token=${KEY}`), await live("", { authorization: `Bearer ${KEY}` })]) {
      expect(r.response.status).toBe(200);
      const snap = await r.next((m) => m.event === "snapshot");
      expect(snap.data.workers).toHaveLength(1);
    }
  });

  test("/machine needs the key too", async () => {
    expect((await fetch(`${gw.url}/machine`)).status).toBe(401);
    expect((await fetch(`${gw.url}/machine?token=${KEY}`)).status).toBe(200);
  });

  test("the page itself carries no data and loads without the key", async () => {
    expect((await fetch(`${gw.url}/ui`, { signal: AbortSignal.timeout(20_000) })).status).toBe(200);
  });
});

describe("without --admin-api-key", () => {
  test("the stream is open (read-only)", async () => {
    const local = new Harness();
    try {
      const g = local.gateway(testConfig([]));
      const r = await SseReader.open(`${g.url}/live`);
      expect(r.response.status).toBe(200);
      await r.next((m) => m.event === "snapshot");
      r.close();
    } finally {
      await local.close();
    }
  });
});
