export * from "./types";
export * from "./context";
export * from "./identity-gate";
export * from "./probe-outcome";
export * from "./machine";
export * from "./probe-actor";
export * from "./scheduler-index";
export * from "./view";
