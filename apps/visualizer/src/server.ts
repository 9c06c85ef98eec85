import { loadPage } from "./bundle";

export interface VisualizerOptions {
  /** The gateway whose /machine and /live the page reads, e.g. http://127.0.0.1:30000. */
  gateway: string;
  host?: string;
  port?: number;
}

/** Serves the page on its own, pointed at a gateway (the gateway answers CORS for /machine and /live). */
export async function startVisualizer(o: VisualizerOptions) {
  const page = await loadPage();
  const gateway = o.gateway.replace(/\/+$/, "");
  const html = page.html({ base: "", gateway });
  const headers = (type: string) => ({ "content-type": type, "cache-control": "no-cache" });
  const server = Bun.serve({
    hostname: o.host ?? "127.0.0.1",
    port: o.port ?? 8080,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/" || path === "/index.html") return new Response(html, { headers: headers("text/html; charset=utf-8") });
      if (path === "/app.js") return new Response(page.js, { headers: headers("text/javascript; charset=utf-8") });
      if (path === "/app.css") return new Response(page.css, { headers: headers("text/css; charset=utf-8") });
      if (path === "/health") return Response.json({ status: "ok", gateway });
      return new Response("not found\n", { status: 404 });
    },
  });
  const host = server.hostname === "0.0.0.0" ? "127.0.0.1" : server.hostname;
  return {
    server,
    port: server.port,
    url: `http://${host}:${server.port}`,
    gateway,
    stop: () => server.stop(true),
  };
}

export type RunningVisualizer = Awaited<ReturnType<typeof startVisualizer>>;
