export * from "./types";
export * from "./static-list";
export * from "./admin-api";
export * from "./kubernetes";
