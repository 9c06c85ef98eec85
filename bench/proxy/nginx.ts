/** nginx as a plain round-robin reverse proxy with upstream keepalive, in the foreground, on loopback. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { childPids, freePort, spawnChild, waitHttp, type Child } from "./procs.ts";
import type { Tool } from "./tools.ts";

export interface NginxProxy {
  /** One listen port per upstream group, by group name. */
  urls: Record<string, string>;
  workers: number;
  /** Master and worker pids, for CPU accounting. */
  pids(): number[];
  stop(): Promise<void>;
}

function config(dir: string, workers: number, groups: Record<string, { port: number; upstreams: string[]; stream: boolean }>): string {
  const blocks = Object.entries(groups).map(
    ([name, g]) => `
  upstream ${name} {
${g.upstreams.map((u) => `    server ${u.replace(/^http:\/\//, "")};`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${g.port};
    location / {
      proxy_pass http://${name};
      proxy_http_version 1.1;
      proxy_set_header Connection "";${g.stream ? "\n      proxy_buffering off;" : ""}
    }
  }`,
  );
  return `daemon off;
master_process on;
worker_processes ${workers};
${process.getuid?.() === 0 ? "user root;" : ""}
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${blocks.join("\n")}
}
`;
}

export async function startNginx(tool: Tool, dir: string, workers: number, groups: Record<string, { upstreams: string[]; stream: boolean }>): Promise<NginxProxy> {
  mkdirSync(dir, { recursive: true });
  const withPorts = Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, { ...g, port: freePort() }]));
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, config(dir, workers, withPorts));
  const child: Child = spawnChild("nginx", [tool.path, "-p", dir, "-c", conf, "-e", join(dir, "error.log")], dir, tool.env);
  const urls = Object.fromEntries(Object.entries(withPorts).map(([k, g]) => [k, `http://127.0.0.1:${g.port}`]));
  for (const url of Object.values(urls)) await waitHttp(`${url}/health`, 10_000, (s) => s === 200, child);
  return { urls, workers, pids: () => [child.pid, ...childPids(child.pid)], stop: () => child.stop() };
}
