import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** Throwaway certificates for a TLS test: a CA, a server cert for 127.0.0.1/localhost, client certs. */
export interface TestPki {
  dir: string;
  /** PEM of the CA that signed the server and client certs. */
  caCert: string;
  caCertPath: string;
  serverCert: string;
  serverKey: string;
  /** Client certificate (CN=switchboard-router) signed by the CA, and its key. */
  clientCert: string;
  clientKey: string;
  clientCertPath: string;
  clientKeyPath: string;
  /** A CA that signed nothing the server presents: trusting only it must fail. */
  otherCaCert: string;
  /** A client cert signed by the other CA: the server must not accept it. */
  otherClientCert: string;
  otherClientKey: string;
  cleanup(): void;
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
const CA_EXT = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];

/** Generates the PKI with the openssl CLI into a fresh temp dir (about 0.1 s). */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(path.join(tmpdir(), "switchboard-pki-"));
  const f = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"], timeout: 15_000 });
  const makeCa = (name: string, cn: string) =>
    openssl("req", "-x509", "-new", ...EC_KEY, "-keyout", f(`${name}.key`), "-out", f(`${name}.crt`),
      "-days", "2", "-subj", `/CN=${cn}`, ...CA_EXT);
  let serial = 1;
  const makeLeaf = (name: string, ca: string, subj: string, ext: string) => {
    writeFileSync(f(`${name}.ext`), ext);
    openssl("req", "-new", ...EC_KEY, "-keyout", f(`${name}.key`), "-out", f(`${name}.csr`), "-subj", subj);
    openssl("x509", "-req", "-in", f(`${name}.csr`), "-CA", f(`${ca}.crt`), "-CAkey", f(`${ca}.key`),
      "-set_serial", String(++serial), "-days", "2", "-out", f(`${name}.crt`), "-extfile", f(`${name}.ext`));
  };
  try {
    makeCa("ca", "switchboard-test-ca");
    makeCa("other-ca", "switchboard-untrusted-ca");
    makeLeaf("server", "ca", "/CN=fake-kube-apiserver",
      "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
    const clientExt = "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n";
    makeLeaf("client", "ca", "/O=switchboard/CN=switchboard-router", clientExt);
    makeLeaf("other-client", "other-ca", "/O=switchboard/CN=intruder", clientExt);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`openssl failed: ${stderr || (err as Error).message}`);
  }
  const read = (name: string) => readFileSync(f(name), "utf8");
  return {
    dir,
    caCert: read("ca.crt"),
    caCertPath: f("ca.crt"),
    serverCert: read("server.crt"),
    serverKey: read("server.key"),
    clientCert: read("client.crt"),
    clientKey: read("client.key"),
    clientCertPath: f("client.crt"),
    clientKeyPath: f("client.key"),
    otherCaCert: read("other-ca.crt"),
    otherClientCert: read("other-client.crt"),
    otherClientKey: read("other-client.key"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
