export * from "./errors";
export * from "./requests";
