export * from "./reconcile";
export * from "./worker-view";
export * from "./worker-index";
export * from "./fleet-machine";
export * from "./fleet";
export * from "./load-scraper";
