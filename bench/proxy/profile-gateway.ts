/**
 * The gateway CLI, but it exits by itself after `--profile-secs` (default 20), so
 * `bun --cpu-prof` gets to write its profile (a SIGTERM'd process does not). Usage:
 *   bun --cpu-prof --cpu-prof-dir=/tmp/prof bench/proxy/profile-gateway.ts --profile-secs 15 <gateway flags>
 * then: bun bench/proxy/profile-summary.ts /tmp/prof/<file>.cpuprofile [from] [to]
 */
import { parseFlags, startGateway } from "../../apps/gateway/src/index.ts";

const argv = process.argv.slice(2);
const at = argv.indexOf("--profile-secs");
const secs = at >= 0 ? Number(argv.splice(at, 2)[1]) : 20;
const parsed = parseFlags(argv);
if ("exitCode" in parsed) {
  process.stderr.write(parsed.output);
  process.exit(parsed.exitCode);
}
const gw = startGateway(parsed.config);
console.log(`profiling ${gw.url} for ${secs} s`);
setTimeout(() => {
  gw.fleet.stop();
  process.exit(0);
}, secs * 1000);
