import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface KubeconfigSpec {
  server: string;
  /** CA PEM, written as certificate-authority-data. */
  ca?: string;
  /** Or a CA file path, written as certificate-authority. */
  caFile?: string;
  /** Client certificate / key PEM (client-certificate-data / client-key-data). */
  cert?: string;
  key?: string;
  certFile?: string;
  keyFile?: string;
  token?: string;
  namespace?: string;
  /** Where to write; default a new temp dir's `config`. */
  path?: string;
}

const b64 = (pem: string) => Buffer.from(pem).toString("base64");
const q = (s: string) => JSON.stringify(s); // a JSON string is a valid YAML scalar

/** Writes a real kubeconfig (YAML, one cluster/user/context) and returns its path. */
export function writeKubeconfig(spec: KubeconfigSpec): string {
  const file = spec.path ?? path.join(mkdtempSync(path.join(tmpdir(), "switchboard-kubeconfig-")), "config");
  const cluster = [`    server: ${q(spec.server)}`];
  if (spec.ca) cluster.push(`    certificate-authority-data: ${q(b64(spec.ca))}`);
  if (spec.caFile) cluster.push(`    certificate-authority: ${q(spec.caFile)}`);
  const user: string[] = [];
  if (spec.cert) user.push(`    client-certificate-data: ${q(b64(spec.cert))}`);
  if (spec.key) user.push(`    client-key-data: ${q(b64(spec.key))}`);
  if (spec.certFile) user.push(`    client-certificate: ${q(spec.certFile)}`);
  if (spec.keyFile) user.push(`    client-key: ${q(spec.keyFile)}`);
  if (spec.token) user.push(`    token: ${q(spec.token)}`);
  const text = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: fake",
    "  cluster:",
    ...cluster,
    "users:",
    "- name: router",
    user.length > 0 ? "  user:" : "  user: {}",
    ...user,
    "contexts:",
    "- name: fake",
    "  context:",
    "    cluster: fake",
    "    user: router",
    ...(spec.namespace ? [`    namespace: ${q(spec.namespace)}`] : []),
    "current-context: fake",
    "",
  ].join("\n");
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}
