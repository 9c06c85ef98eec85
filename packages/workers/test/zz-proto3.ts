import { explore } from "./machine-model";
const identity = ["healthy", "unhealthy", "restart", "restartBare", "identityFailed", "identityNone"] as const;
const cfgs: any[] = [
  { name: "no id known", spec: { modelId: "m" }, config: { failureThreshold: 1, successThreshold: 2 }, outcomes: [...identity], operatorEvents: false, countPendingProbes: false },
  { name: "seeded id", spec: { modelId: "m", engineId: "e-seed" }, config: { failureThreshold: 1, successThreshold: 1 }, outcomes: [...identity], operatorEvents: false , countPendingProbes: false},
  { name: "pinned id", spec: { modelId: "m", engineId: "e-pin", engineIdPinned: true }, config: { failureThreshold: 1, successThreshold: 1 }, outcomes: [...identity], operatorEvents: false, countPendingProbes: false },
];
for (const c of cfgs) { const t = performance.now(); const r = explore(c); console.log(c.name, r.statesSeen, r.edges.length, (performance.now() - t).toFixed(0), "ms"); }
