// Checks an answer against the shape its operation promises (src/openapi.ts, generated
// from the API's OpenAPI document), so that a page from a proxy or another server is an
// error at the call, not an undefined deep in the agent's code.
import { shapes, type Shape } from "./openapi.js";

type JSONType = "null" | "boolean" | "integer" | "number" | "string" | "array" | "object";

function typeOf(v: unknown): JSONType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as JSONType; // JSON.parse makes nothing else
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
const at = (path: string) => (path ? `${path}: ` : "");

/**
 * The first way value is not of shape, with its path (`beliefs[3].id: expected integer,
 * got string`), or undefined when it is of it. Properties the shape does not list are
 * not checked: a newer server may add them.
 */
export function mismatch(shape: Shape, value: unknown, path = ""): string | undefined {
  if (shape.$ref !== undefined) {
    const named = shapes[shape.$ref];
    return named === undefined ? `${at(path)}no schema ${shape.$ref}` : mismatch(named, value, path);
  }
  const kind = typeOf(value);
  if (shape.type !== undefined) {
    const types = Array.isArray(shape.type) ? shape.type : [shape.type];
    if (!types.some((t) => t === kind || (t === "number" && kind === "integer"))) {
      return `${at(path)}expected ${types.join(" or ")}, got ${kind}`;
    }
  }
  if (kind === "array") {
    const items = shape.items;
    if (items === undefined) return undefined;
    for (const [i, v] of (value as unknown[]).entries()) {
      const m = mismatch(items, v, `${path}[${i}]`);
      if (m !== undefined) return m;
    }
  } else if (kind === "object") {
    const o = value as Record<string, unknown>;
    for (const k of shape.required ?? []) {
      if (!Object.hasOwn(o, k)) return `${at(path)}${k} is missing`;
    }
    for (const [k, v] of Object.entries(o)) {
      const s = (shape.properties && Object.hasOwn(shape.properties, k) ? shape.properties[k] : undefined) ?? shape.additionalProperties;
      const m = s === undefined ? undefined : mismatch(s, v, join(path, k));
      if (m !== undefined) return m;
    }
  }
  return undefined;
}
