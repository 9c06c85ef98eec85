/** Key-case conversion between proto field names (snake_case, keepCase) and our TS types. */

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const toSnake = (key: string) => key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

function convert(value: unknown, rename: (k: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, rename));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // proto-loader's synthetic oneof markers ("_dp_rank") are not fields.
    if (k.startsWith("_")) continue;
    out[rename(k)] = convert(v, rename);
  }
  return out;
}

/** A decoded message → its camelCase view. */
export const fromWire = <T>(message: unknown): T => convert(message, toCamel) as T;
/** A camelCase object → a message for the encoder. */
export const toWire = (value: unknown): Record<string, unknown> => convert(value, toSnake) as Record<string, unknown>;
