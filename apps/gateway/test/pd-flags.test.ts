/** PD flags: grouping of --prefill URL [BOOTSTRAP_PORT], defaults, and refusals (exit 2, one line). */
import { describe, expect, test } from "bun:test";
import { parseFlags } from "../src";

const pd = (argv: string[]) => {
  const r = parseFlags(argv);
  if (!("config" in r)) throw new Error(r.output);
  return r.config.pd;
};
const refused = (argv: string[]) => {
  const r = parseFlags(argv);
  if ("config" in r) throw new Error("accepted");
  expect(r.exitCode).toBe(2);
  expect(r.output.trim().split("\n")).toHaveLength(1);
  return r.output;
};

describe("PD flags", () => {
  test("off by default", () => {
    expect(pd([])).toMatchObject({ enabled: false, prefill: [], decode: [], kvConnector: "MooncakeConnector", prefillPolicy: "cache_aware", decodePolicy: "cache_aware" });
  });

  test("--prefill URL [PORT] repeatable and grouped; --decode repeatable; http and grpc", () => {
    const c = pd([
      "--pd-disaggregation",
      "--prefill", "http://p1:8000", "8998",
      "--prefill", "grpc://p2:50051",
      "--prefill", "http://p3:8000/", "9001", "http://p4:8000",
      "--decode", "http://d1:8000", "grpc://d2:50051",
      "--decode", "http://d3:8000",
    ]);
    expect(c.prefill).toEqual([
      { url: "http://p1:8000", bootstrapPort: 8998 },
      { url: "grpc://p2:50051" },
      { url: "http://p3:8000", bootstrapPort: 9001 },
      { url: "http://p4:8000" },
    ]);
    expect(c.decode).toEqual(["http://d1:8000", "grpc://d2:50051", "http://d3:8000"]);
    expect(c.enabled).toBe(true);
  });

  test("policies default to --policy; each can be set", () => {
    expect(pd(["--pd-disaggregation", "--policy", "random"])).toMatchObject({ prefillPolicy: "random", decodePolicy: "random" });
    expect(pd(["--pd-disaggregation", "--policy", "random", "--prefill-policy", "cache_aware", "--decode-policy", "least_load"])).toMatchObject({
      prefillPolicy: "cache_aware",
      decodePolicy: "least_load",
    });
  });

  test("--kv-connector", () => {
    expect(pd(["--pd-disaggregation", "--kv-connector", "NixlConnector"]).kvConnector).toBe("NixlConnector");
    expect(pd(["--pd-disaggregation", "--kv-connector", "sglang"]).kvConnector).toBe("sglang");
    expect(refused(["--pd-disaggregation", "--kv-connector", "Other"])).toContain("Allowed choices");
  });

  test("refusals", () => {
    expect(refused(["--prefill", "http://p:1"])).toContain("--prefill needs --pd-disaggregation");
    expect(refused(["--decode", "http://d:1"])).toContain("--decode needs --pd-disaggregation");
    expect(refused(["--pd-disaggregation", "--prefill", "8998"])).toContain("must follow a prefill URL");
    expect(refused(["--pd-disaggregation", "--prefill", "http://p:1", "8998", "8999"])).toContain("two bootstrap ports");
    expect(refused(["--pd-disaggregation", "--prefill", "http://p:1", "70000"])).toContain("1..65535");
    expect(refused(["--pd-disaggregation", "--prefill", "ftp://p:1"])).toContain("must use http://");
    expect(refused(["--pd-disaggregation", "--decode-policy", "nope"])).toContain("Allowed choices");
  });
});
