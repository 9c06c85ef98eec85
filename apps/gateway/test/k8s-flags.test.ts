import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildGateway, parseFlags } from "../src";
import { testConfig } from "./harness";

const parse = (...argv: string[]) => parseFlags(argv);

describe("Kubernetes discovery flags", () => {
  test("off by default", () => {
    const r = parse();
    expect("config" in r && r.config.serviceDiscovery).toBeUndefined();
  });

  test("every flag reaches the config", () => {
    const r = parse(
      "--service-discovery",
      "--service-discovery-namespace", "serving",
      "--selector", "app=llm", "tier=gpu",
      "--service-discovery-port", "8100",
      "--k8s-discovery-mode", "service-name",
      "--model-label", "model",
      "--pd-disaggregation",
      "--prefill-selector", "role=prefill",
      "--decode-selector", "role=decode,pool=a",
      "--kubeconfig", "/tmp/kc",
    );
    if (!("config" in r)) throw new Error(r.output);
    expect(r.config.serviceDiscovery).toEqual({
      mode: "service-name",
      namespace: "serving",
      selector: { app: "llm", tier: "gpu" },
      port: 8100,
      modelLabel: "model",
      prefillSelector: { role: "prefill" },
      decodeSelector: { role: "decode", pool: "a" },
      kubeconfigPath: "/tmp/kc",
    });
  });

  test("defaults: pod-ip, port 8000, no selector, namespace from the config", () => {
    const r = parse("--service-discovery");
    if (!("config" in r)) throw new Error(r.output);
    expect(r.config.serviceDiscovery).toMatchObject({ mode: "pod-ip", port: 8000, selector: {} });
    expect(r.config.serviceDiscovery!.namespace).toBeUndefined();
  });

  test("bad values and stray flags are refused with exit code 2 and a reason", () => {
    const cases: [string[], RegExp][] = [
      [["--service-discovery", "--selector", "app"], /--selector: 'app' is not a label selector/],
      [["--service-discovery", "--k8s-discovery-mode", "dns"], /--k8s-discovery-mode/],
      [["--service-discovery", "--service-discovery-port", "0"], /--service-discovery-port must be 1..65535/],
      [["--selector", "app=llm"], /--selector needs --service-discovery/],
      [["--kubeconfig", "/tmp/kc"], /--kubeconfig needs --service-discovery/],
      [["--service-discovery", "--prefill-selector", "role=prefill"], /--prefill-selector needs --pd-disaggregation/],
    ];
    for (const [argv, why] of cases) {
      const r = parseFlags(argv);
      expect("exitCode" in r && r.exitCode).toBe(2);
      expect("output" in r && r.output).toMatch(why);
    }
  });

  test("an unusable kube config stops start-up with its reason", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "k8s-flags-"));
    const insecure = path.join(dir, "config");
    writeFileSync(
      insecure,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {token: t}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
      ].join("\n"),
    );
    expect(() => buildGateway(testConfig(["--service-discovery", "--kubeconfig", insecure]))).toThrow(/insecure-skip-tls-verify/);
    expect(() => buildGateway(testConfig(["--service-discovery", "--kubeconfig", path.join(dir, "missing")]))).toThrow(/config/);
  });
});
