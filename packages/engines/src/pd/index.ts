export * from "./kv-transfer";
export * from "./legs";
