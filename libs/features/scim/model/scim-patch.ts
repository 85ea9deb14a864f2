import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget } from './scim-error';
import { elementMatches, filterSeed, parseScimPath, PathTarget } from './scim-path';
import { AttrDef, findAttr, ResourceDef, SCIM_URN } from './scim-schemas';

export type ScimJson = Record<string, unknown>;
export type PatchOpName = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchOpName;
  path?: string;
  value?: unknown;
}

interface Context {
  /** Whole bodies (POST, PUT) and path-less values: read-only and unknown attributes are skipped. */
  lenient: boolean;
  /** Whole bodies: read-only attributes are skipped whatever their value. */
  wholeBody: boolean;
  where: string;
}

const isObject = (v: unknown): v is ScimJson => v !== null && typeof v === 'object' && !Array.isArray(v);
const keyOf = (o: ScimJson, name: string) => Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
const hasSchema = (schemas: unknown, urn: string) =>
  Array.isArray(schemas) && schemas.some((s) => typeof s === 'string' && s.toLowerCase() === urn.toLowerCase());

/** The operations of an RFC 7644 §3.5.2 PatchOp body; op names in any capitalisation. */
export function readOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw invalidSyntax('The body must be a PatchOp object.');
  if (!hasSchema(body[keyOf(body, 'schemas') ?? 'schemas'], SCIM_URN.patchOp)) throw invalidSyntax(`schemas must contain "${SCIM_URN.patchOp}".`);
  const list = body[keyOf(body, 'Operations') ?? 'Operations'];
  if (!Array.isArray(list) || list.length === 0) throw invalidSyntax('Operations must be a non-empty array.');
  return list.map((raw, i) => {
    if (!isObject(raw)) throw invalidSyntax(`Operations[${i}] must be an object.`);
    const op = raw[keyOf(raw, 'op') ?? 'op'];
    const name = typeof op === 'string' ? op.trim().toLowerCase() : '';
    if (name !== 'add' && name !== 'replace' && name !== 'remove') throw invalidSyntax(`Operations[${i}].op must be add, replace or remove.`);
    const path = raw[keyOf(raw, 'path') ?? 'path'];
    if (path !== undefined && path !== null && typeof path !== 'string') throw invalidPath(`Operations[${i}].path must be a string.`);
    const valueKey = keyOf(raw, 'value');
    return { op: name, ...(typeof path === 'string' && path.trim() !== '' ? { path } : {}), ...(valueKey ? { value: raw[valueKey] } : {}) };
  });
}

/**
 * Applies a PatchOp body to a resource (its SCIM representation) and answers the new one; the
 * input is not changed. Pure: the caller writes the difference, in one transaction, so either
 * every operation applies or none does. What it accepts beyond the letter of RFC 7644, because
 * Okta and Entra ID send it: any capitalisation of op names and attribute names; booleans as
 * strings ("True"); path-less values whose keys are dotted (`name.givenName`) or SCIM_URN-prefixed
 * paths; `remove` on a multi-valued attribute with a `value` list (removes those only); `add` or
 * `replace` through an `eq` value filter that matches nothing (creates the element); `id` equal
 * to the resource's own in a path-less value (ignored).
 */
export function applyScimPatch(resource: ScimJson, body: unknown, def: ResourceDef): ScimJson {
  const out = structuredClone(resource);
  readOperations(body).forEach((op, i) => applyOperation(out, op, def, `Operations[${i}]`));
  return out;
}

/** A whole resource body (POST, PUT) read into the resource's representation, read-only attributes skipped. */
export function readScimResource(body: unknown, def: ResourceDef): ScimJson {
  if (!isObject(body)) throw invalidSyntax(`The body must be a SCIM ${def.name} object.`);
  if (!hasSchema(body[keyOf(body, 'schemas') ?? 'schemas'], def.core.id)) throw invalidSyntax(`schemas must contain "${def.core.id}".`);
  const out: ScimJson = {};
  applyValueObject(out, 'add', body, def, { lenient: true, wholeBody: true, where: 'body' });
  return out;
}

function applyOperation(res: ScimJson, op: PatchOperation, def: ResourceDef, where: string): void {
  if (op.path === undefined) {
    if (op.op === 'remove') throw noTarget(`${where}: remove needs a path.`);
    if (!isObject(op.value)) throw invalidValue(`${where}: without a path, value must be an object of attributes.`);
    applyValueObject(res, op.op, op.value, def, { lenient: true, wholeBody: false, where });
    return;
  }
  applyAt(res, op.op, parseScimPath(op.path, def), op.value, def, { lenient: false, wholeBody: false, where: `${where} (${op.path})` });
}

/** Each key of a value object is a path of its own (`name`, `name.givenName`, `urn:…:employeeNumber`, an extension SCIM_URN). */
function applyValueObject(res: ScimJson, op: PatchOpName, value: ScimJson, def: ResourceDef, ctx: Context): void {
  for (const [key, v] of Object.entries(value)) {
    if (key.toLowerCase() === 'schemas') continue;
    let target: PathTarget;
    try {
      target = parseScimPath(key, def);
    } catch (err) {
      // An attribute this resource does not define, in a body: ignored, as RFC 7644 lets a service do.
      if (ctx.lenient) continue;
      throw err;
    }
    applyAt(res, op, target, v, def, { ...ctx, where: ctx.where === 'body' ? key : `${ctx.where} (${key})` });
  }
}

function applyAt(res: ScimJson, op: PatchOpName, target: PathTarget, given: unknown, def: ResourceDef, ctx: Context): void {
  let value = given;
  if (target.kind === 'ignored') return;
  if (target.kind === 'extension') {
    if (op === 'remove' || value === null) {
      delete res[target.schema.id];
      return;
    }
    if (!isObject(value)) throw invalidValue(`${ctx.where}: must be an object of ${target.schema.name} attributes.`);
    for (const [key, v] of Object.entries(value)) {
      let inner: PathTarget;
      try {
        inner = parseScimPath(`${target.schema.id}:${key}`, def);
      } catch (err) {
        if (ctx.lenient) continue;
        throw err;
      }
      applyAt(res, op, inner, v, def, { ...ctx, where: `${ctx.where}.${key}` });
    }
    return;
  }
  if (target.subIgnored) {
    // Not kept, so nothing to write; but a replace through a value filter that matches nothing has
    // no target (RFC 7644 §3.5.2.3), and there is no element to make of a value never kept.
    const clearing = given === null || given === '' || op === 'remove';
    if (op === 'replace' && target.filter && !clearing && !matchesAny(res, target)) {
      throw noTarget(`${ctx.where}: the value filter matches no value of ${target.attr.name}.`);
    }
    return;
  }
  const { attr, sub } = target;
  // Entra's null update is "": it clears a string (or a complex value given as a string, the
  // manager) as null does. Not a boolean's value, and not a whole multi-valued list's (members).
  if (value === '' && (sub ?? attr).type !== 'boolean' && (sub !== undefined || !attr.multiValued)) value = null;
  if (attr.mutability === 'readOnly' || sub?.mutability === 'readOnly') {
    if (ctx.wholeBody) return;
    // Okta renames a group with a path-less replace of {id, displayName}: its own id changes nothing.
    if (attr.name === 'id' && op !== 'remove' && ctx.lenient && String(value) === String(res.id)) return;
    if (attr.name === 'meta' && ctx.lenient) return;
    throw mutability(`${ctx.where}: ${sub ? `${attr.name}.${sub.name}` : attr.name} is read-only.`);
  }
  if (sub?.mutability === 'immutable' && op !== 'remove') throw mutability(`${ctx.where}: ${attr.name}.${sub.name} cannot be changed.`);
  const container = target.container === null ? res : ((res[target.container] as ScimJson | undefined) ?? (res[target.container] = {}));
  if (attr.multiValued) applyMulti(container, op, target, value, ctx.where);
  else applySingle(container, op, target, value, ctx.where);
  if (target.container !== null && Object.keys(container).length === 0) delete res[target.container];
}

/** Whether a value filter of the target selects an element the resource has. */
function matchesAny(res: ScimJson, target: Extract<PathTarget, { kind: 'attr' }>): boolean {
  const container = target.container === null ? res : res[target.container];
  const list = isObject(container) ? container[target.attr.name] : undefined;
  const { filter, attr } = target;
  return filter !== undefined && Array.isArray(list) && list.some((x) => elementMatches(filter, x, attr));
}

function applySingle(container: ScimJson, op: PatchOpName, target: Extract<PathTarget, { kind: 'attr' }>, value: unknown, where: string): void {
  const { attr, sub } = target;
  const key = attr.name;
  const removing = op === 'remove' || value === null;
  if (sub) {
    const current: ScimJson = { ...((container[key] as ScimJson | undefined) ?? {}) };
    if (removing) delete current[sub.name];
    else current[sub.name] = coerceSimple(sub, value, where);
    if (Object.keys(current).length > 0) container[key] = current;
    else delete container[key];
    return;
  }
  if (removing) {
    if (attr.mutability === 'immutable' && container[key] !== undefined) throw mutability(`${where}: ${key} cannot be removed.`);
    delete container[key];
    return;
  }
  if (attr.type === 'complex') {
    // RFC 7644 §3.5.2.3: sub-attributes not given are left as they are; null clears one.
    const merged: ScimJson = { ...((container[key] as ScimJson | undefined) ?? {}) };
    for (const [k, v] of Object.entries(coerceComplex(attr, value, where, true))) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    if (Object.keys(merged).length > 0) container[key] = merged;
    else delete container[key];
    return;
  }
  const next = coerceSimple(attr, value, where);
  if (attr.mutability === 'immutable' && container[key] !== undefined && !sameSimple(attr, container[key], next)) {
    throw mutability(`${where}: ${key} cannot be changed once set.`);
  }
  container[key] = next;
}

function applyMulti(container: ScimJson, op: PatchOpName, target: Extract<PathTarget, { kind: 'attr' }>, value: unknown, where: string): void {
  const { attr, sub, filter } = target;
  const key = attr.name;
  let list: unknown[] = Array.isArray(container[key]) ? [...(container[key] as unknown[])] : [];
  const touched: unknown[] = [];
  const removing = op === 'remove' || value === null;
  if (!filter) {
    if (sub) throw invalidPath(`${where}: ${key}.${sub.name} needs a value filter, such as ${key}[type eq "work"].${sub.name}.`);
    if (removing) {
      // Entra ID removes members with {path: "members", value: [{value: id}]}: only those go.
      if (value === undefined || value === null) list = [];
      else {
        const drop = coerceList(attr, value, where);
        list = list.filter((x) => !drop.some((d) => sameElement(attr, x, d)));
      }
    } else {
      if (op === 'replace') list = [];
      for (const item of coerceList(attr, value, where)) {
        const at = list.findIndex((x) => sameElement(attr, x, item));
        const merged = at >= 0 && isObject(item) ? { ...(list[at] as ScimJson), ...item } : item;
        if (at >= 0) list[at] = merged;
        else list.push(merged);
        touched.push(merged);
      }
    }
  } else {
    const matched = new Set(list.filter((x) => elementMatches(filter, x, attr)));
    if (removing) {
      if (!sub || sub.name === 'value') list = list.filter((x) => !matched.has(x));
      else list = list.map((x) => (matched.has(x) ? withoutKey(x as ScimJson, sub.name) : x));
    } else {
      const patchOf = (x: ScimJson): ScimJson =>
        sub ? { ...x, [sub.name]: coerceSimple(sub, value, where) } : { ...x, ...coerceComplex(attr, value, where, false) };
      if (matched.size > 0) {
        list = list.map((x) => {
          if (!matched.has(x)) return x;
          const next = patchOf(x as ScimJson);
          touched.push(next);
          return next;
        });
      } else {
        const seed = filterSeed(filter, attr);
        if (!seed) throw noTarget(`${where}: the value filter matches no value of ${key}.`);
        const created = patchOf(seed);
        list.push(created);
        touched.push(created);
      }
    }
  }
  keepOnePrimary(attr, list, touched);
  if (list.length > 0) container[key] = list;
  else delete container[key];
}

const withoutKey = (o: ScimJson, k: string): ScimJson => {
  const copy = { ...o };
  delete copy[k];
  return copy;
};

/** "The primary attribute value true MUST appear no more than once" (RFC 7643 §2.4): the last one set wins. */
function keepOnePrimary(attr: AttrDef, list: unknown[], touched: unknown[]): void {
  if (!findAttr(attr.subAttributes, 'primary')) return;
  const primaries = list.filter((x) => isObject(x) && x.primary === true);
  if (primaries.length <= 1) return;
  const keep = [...touched].reverse().find((x) => primaries.includes(x)) ?? primaries[0];
  list.forEach((x, i) => {
    if (isObject(x) && x.primary === true && x !== keep) list[i] = { ...x, primary: false };
  });
}

function sameSimple(attr: AttrDef, a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string' && !attr.caseExact) return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

/** Two values of a multi-valued attribute are the same when their `value` (and `type`, when both have one) are. */
function sameElement(attr: AttrDef, a: unknown, b: unknown): boolean {
  if (!isObject(a) || !isObject(b)) return sameSimple(attr, a, b);
  const valueDef = findAttr(attr.subAttributes, 'value');
  if (valueDef) {
    if (!sameSimple(valueDef, a.value, b.value)) return false;
    return a.type === undefined || b.type === undefined || String(a.type).toLowerCase() === String(b.type).toLowerCase();
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

function coerceList(attr: AttrDef, value: unknown, where: string): unknown[] {
  const list = Array.isArray(value) ? value : [value];
  return list
    .filter((x) => x !== null && x !== undefined)
    .map((x, i) => (attr.type === 'complex' ? coerceComplex(attr, x, `${where}[${i}]`, false) : coerceSimple(attr, x, `${where}[${i}]`)));
}

/**
 * A complex value: sub-attribute names in any case; read-only and unknown sub-attributes dropped
 * (Entra sends `"$ref": null` with members); a bare string or number stands for `{value: …}`
 * (Entra sends the manager's id alone). `keepNulls` keeps explicit nulls (they clear on merge).
 */
function coerceComplex(attr: AttrDef, value: unknown, where: string, keepNulls: boolean): ScimJson {
  const valueDef = findAttr(attr.subAttributes, 'value');
  if ((typeof value === 'string' || typeof value === 'number') && valueDef) return { value: coerceSimple(valueDef, value, `${where}.value`) };
  if (!isObject(value)) throw invalidValue(`${where}: must be an object.`);
  const out: ScimJson = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = findAttr(attr.subAttributes, k);
    if (!sub || sub.mutability === 'readOnly' || v === undefined) continue;
    if (v === null) {
      if (keepNulls) out[sub.name] = null;
      continue;
    }
    out[sub.name] = coerceSimple(sub, v, `${where}.${sub.name}`);
  }
  return out;
}

/** A simple value of the attribute's type; booleans also as the strings "true"/"false" in any case. */
export function coerceSimple(attr: AttrDef, value: unknown, where: string): string | boolean {
  if (attr.type === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
    throw invalidValue(`${where}: must be a boolean.`);
  }
  if (attr.type === 'complex') throw invalidValue(`${where}: must be an object.`);
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else throw invalidValue(`${where}: must be a string.`);
  if (attr.maxLength !== undefined && text.length > attr.maxLength) throw invalidValue(`${where}: must be at most ${attr.maxLength} characters.`);
  return text;
}
