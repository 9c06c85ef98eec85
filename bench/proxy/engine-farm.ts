/**
 * Many mock engines in one process, one loopback port each, for the scale section.
 * Usage: bun engine-farm.ts <count> <model> <urls-file>. Writes the URLs (JSON) when all listen.
 */
import { writeFileSync } from "node:fs";
import { startMockEngine, type MockEngine } from "../../apps/mock-engine/src/index.ts";

const [countArg, model, urlsFile] = process.argv.slice(2);
const engines: MockEngine[] = [];
for (let i = 0; i < Number(countArg); i++) engines.push(await startMockEngine({ models: [model!], recordLimit: 0 }));
writeFileSync(urlsFile!, JSON.stringify(engines.map((e) => e.url)));

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    void Promise.race([Promise.all(engines.map((e) => e.stop())), Bun.sleep(2000)]).then(() => process.exit(0));
  });
}
