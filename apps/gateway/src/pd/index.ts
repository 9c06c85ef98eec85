export { createPdDispatch, pinnedRank } from "./dispatch";
export { pdStaticWorkers } from "./static-workers";
export { inferenceUrl, HTTP_URL_LABEL, HTTP_PORT_LABEL } from "./data-path";
export { PdMetrics } from "./metrics";
