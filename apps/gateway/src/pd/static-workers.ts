import type { DesiredWorker } from "@switchboard/discovery";
import type { PdConfig } from "../config/types";

const connectionMode = (url: string) => (url.startsWith("grpc://") ? "grpc" : "http") as "grpc" | "http";

/** The `--prefill` / `--decode` workers, for the static discovery source. */
export function pdStaticWorkers(pd: PdConfig): DesiredWorker[] {
  const common = { labels: {}, priority: 0, source: "static", kvConnector: pd.kvConnector } as const;
  return [
    ...pd.prefill.map(
      (p): DesiredWorker => ({ ...common, url: p.url, sourceKey: p.url, connectionMode: connectionMode(p.url), workerType: "prefill", bootstrapPort: p.bootstrapPort }),
    ),
    ...pd.decode.map((url): DesiredWorker => ({ ...common, url, sourceKey: url, connectionMode: connectionMode(url), workerType: "decode" })),
  ];
}
