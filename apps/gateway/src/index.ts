export * from "./config/types";
export * from "./config/flags";
export * from "./app";
export * from "./server";
