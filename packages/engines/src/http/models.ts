import type { ModelInfo } from "@switchboard/workers";

/** Parses an OpenAI-style model list; LoRA adapters keep their parent. Throws on a malformed reply. */
export function parseModelList(body: unknown): ModelInfo[] {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw new Error("model list has no data array");
  const models: ModelInfo[] = [];
  for (const entry of data) {
    const id = (entry as { id?: unknown })?.id;
    if (typeof id !== "string" || id.length === 0) continue;
    const e = entry as { parent?: unknown; root?: unknown; max_model_len?: unknown };
    models.push({
      id,
      parent: typeof e.parent === "string" ? e.parent : null,
      root: typeof e.root === "string" ? e.root : undefined,
      maxModelLen: typeof e.max_model_len === "number" ? e.max_model_len : undefined,
    });
  }
  return models;
}
