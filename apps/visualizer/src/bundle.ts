import { join } from "node:path";

/** The page, built for the browser: one script, one stylesheet, and the HTML around them. */
export interface PageAssets {
  js: string;
  css: string;
  /** `base`: the path the assets are served under ("" or "/ui"); `gateway`: where /live is ("" = same origin). */
  html(o: { base: string; gateway: string }): string;
}

const PAGE = join(import.meta.dir, "page");

function attr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

async function build(): Promise<PageAssets> {
  // Bundled here, from local sources: the page needs nothing from a CDN and works offline.
  const out = await Bun.build({ entrypoints: [join(PAGE, "main.ts")], target: "browser", minify: true, sourcemap: "none" });
  if (!out.success || !out.outputs[0]) throw new AggregateError(out.logs, "the visualizer page did not build");
  const [js, css, template] = await Promise.all([out.outputs[0].text(), Bun.file(join(PAGE, "app.css")).text(), Bun.file(join(PAGE, "index.html")).text()]);
  return {
    js,
    css,
    html: ({ base, gateway }) => template.replaceAll("{{BASE}}", attr(base)).replaceAll("{{GATEWAY}}", attr(gateway)),
  };
}

let built: Promise<PageAssets> | undefined;

/** Builds once per process; a failed build is tried again on the next call. */
export function loadPage(): Promise<PageAssets> {
  if (!built) {
    built = build();
    built.catch(() => (built = undefined));
  }
  return built;
}
