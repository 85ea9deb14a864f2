import type { ScimJson } from './scim-patch';
import { ResourceDef } from './scim-schemas';

/** RFC 7644 §3.4.2.5 `attributes` / `excludedAttributes`, as lists of attribute paths. */
export interface Projection {
  attributes?: string[];
  excludedAttributes?: string[];
}

interface Spec {
  /** null: core attributes; else the extension SCIM_URN. */
  container: string | null;
  /** Attribute name, or null for a whole extension. */
  name: string | null;
  sub?: string;
}

/** `a, b.c` (or a repeated query parameter) → `['a', 'b.c']`; undefined when absent. */
export function attributeList(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(','));
  const list = parts.map((p) => p.trim()).filter((p) => p !== '');
  return list.length > 0 ? list : undefined;
}

function spec(path: string, def: ResourceDef): Spec {
  const lower = path.toLowerCase();
  for (const schema of [def.core, ...def.extensions]) {
    const id = schema.id.toLowerCase();
    const container = schema === def.core ? null : schema.id;
    if (lower === id) return { container, name: null };
    if (lower.startsWith(`${id}:`)) {
      const [name, sub] = path.slice(id.length + 1).split('.', 2);
      return { container, name, sub };
    }
  }
  const [name, sub] = path.split('.', 2);
  return { container: null, name, sub };
}

const keyOf = (o: ScimJson, name: string) => Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
const ALWAYS = new Set(['id', 'schemas']);

/** Only the named sub-attribute of a complex value (or of each element of a multi-valued one). */
function pick(value: unknown, sub: string, into: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((el, i) => pick(el, sub, Array.isArray(into) ? into[i] : undefined));
  }
  if (value === null || typeof value !== 'object') return into;
  const k = keyOf(value as ScimJson, sub);
  const base = (into && typeof into === 'object' ? into : {}) as ScimJson;
  return k === undefined ? base : { ...base, [k]: (value as ScimJson)[k] };
}

function drop(value: unknown, sub: string): unknown {
  if (Array.isArray(value)) return value.map((el) => drop(el, sub));
  if (value === null || typeof value !== 'object') return value;
  const copy = { ...(value as ScimJson) };
  const k = keyOf(copy, sub);
  if (k !== undefined) delete copy[k];
  return copy;
}

/**
 * The resource as the query asked for it: with `attributes`, only `schemas`, `id` and the named
 * attributes (sub-attributes and whole extensions by SCIM_URN allowed); with `excludedAttributes`,
 * everything but those (`id` and `schemas` are always returned). Names match ignoring case;
 * names the resource does not have are ignored.
 */
export function projectResource(resource: ScimJson, def: ResourceDef, projection: Projection): ScimJson {
  let out: ScimJson = resource;
  if (projection.attributes) {
    out = { schemas: resource.schemas, id: resource.id };
    for (const s of projection.attributes.map((p) => spec(p, def))) {
      const source = s.container === null ? resource : (resource[s.container] as ScimJson | undefined);
      if (!source) continue;
      if (s.name === null) {
        out[s.container as string] = source;
        continue;
      }
      const key = keyOf(source, s.name);
      if (key === undefined) continue;
      const target = s.container === null ? out : ((out[s.container] as ScimJson | undefined) ?? (out[s.container] = {}));
      target[key] = s.sub ? pick(source[key], s.sub, target[key]) : source[key];
    }
  }
  if (projection.excludedAttributes) {
    out = structuredClone(out);
    for (const s of projection.excludedAttributes.map((p) => spec(p, def))) {
      if (s.name === null) {
        delete out[s.container as string];
        continue;
      }
      const holder = s.container === null ? out : (out[s.container] as ScimJson | undefined);
      const key = holder && keyOf(holder, s.name);
      if (!holder || key === undefined || (s.container === null && ALWAYS.has(key))) continue;
      if (s.sub) holder[key] = drop(holder[key], s.sub);
      else delete holder[key];
      if (s.container !== null && Object.keys(holder).length === 0) delete out[s.container];
    }
  }
  return out;
}

/** Whether the answer will carry `name` (a top-level core attribute): lets a list skip loading it. */
export function projectionIncludes(def: ResourceDef, projection: Projection, name: string): boolean {
  const named = (list?: string[]) =>
    list?.some((p) => {
      const s = spec(p, def);
      return s.container === null && s.name?.toLowerCase() === name.toLowerCase();
    }) ?? false;
  if (projection.attributes && !named(projection.attributes)) return false;
  if (
    projection.excludedAttributes?.some((p) => {
      const s = spec(p, def);
      return s.container === null && !s.sub && s.name?.toLowerCase() === name.toLowerCase();
    })
  )
    return false;
  return true;
}
