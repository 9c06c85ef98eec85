import { existsSync } from "node:fs";
import { join } from "node:path";

/** The visualizer page, built for the browser (see apps/visualizer/src/bundle.ts). */
export interface PageAssets {
  js: string;
  css: string;
  html(o: { base: string; gateway: string }): string;
}

// Loaded by path, not as a package: the visualizer's own tests start a gateway, and a dependency
// both ways would be a cycle in the workspace graph.
const BUNDLE = join(import.meta.dir, "../../../visualizer/src/bundle.ts");

let page: Promise<PageAssets | null> | undefined;

/** Built once, on the first request for it (a gateway nobody looks at never pays for the build). */
export function visualizerPage(): Promise<PageAssets | null> {
  page ??= existsSync(BUNDLE)
    ? import(BUNDLE).then((m: { loadPage(): Promise<PageAssets> }) => m.loadPage())
    : Promise.resolve(null);
  // A failed build is retried on the next request rather than remembered.
  page.catch(() => (page = undefined));
  return page;
}
