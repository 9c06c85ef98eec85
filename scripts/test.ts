/**
 * Runs every package's tests through turbo, then sums the JUnit reports into the one line CI
 * reads: `tests: N passed, N failed`. A package that wrote no report counts as a failure.
 */
import { Glob } from "bun";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dir, "..");
const pkgs = [...new Glob("{apps,packages}/*/package.json").scanSync({ cwd: root })].map((p) => dirname(p)).sort();
for (const p of pkgs) rmSync(join(root, p, ".junit.xml"), { force: true });

const concurrency = process.env.SWITCHBOARD_TEST_CONCURRENCY ?? "2";
const turbo = Bun.spawn([join(root, "node_modules/.bin/turbo"), "run", "test", "--continue", `--concurrency=${concurrency}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" },
});
const turboExit = await turbo.exited;

let passed = 0;
let failed = 0;
let skipped = 0;
const rows: string[] = [];
const filtered = process.argv.slice(2).some((a) => a.startsWith("--filter"));
for (const p of pkgs) {
  const file = join(root, p, ".junit.xml");
  const hasTests = [...new Glob("{test,src}/**/*.test.ts").scanSync({ cwd: join(root, p) })].length > 0;
  if (!existsSync(file)) {
    if (!filtered && hasTests) {
      failed++;
      rows.push(`  ${p}: no test report (the package's tests crashed or did not run)`);
    }
    continue;
  }
  const xml = await Bun.file(file).text();
  const m = /<testsuites[^>]*\btests="(\d+)"[^>]*\bfailures="(\d+)"[^>]*\bskipped="(\d+)"/.exec(xml);
  const errs = Number(/<testsuites[^>]*\berrors="(\d+)"/.exec(xml)?.[1] ?? 0);
  if (!m) {
    failed++;
    rows.push(`  ${p}: unreadable test report`);
    continue;
  }
  const [t, f, s] = [Number(m[1]), Number(m[2]) + errs, Number(m[3])];
  passed += t - f - s;
  failed += f;
  skipped += s;
  rows.push(`  ${p}: ${t - f - s} passed, ${f} failed${s ? `, ${s} skipped` : ""}`);
}
console.log("\nper package:\n" + rows.join("\n"));
if (turboExit !== 0 && failed === 0) {
  failed++;
  console.log("  turbo exited non-zero with no failing test recorded: counted as one failure");
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
