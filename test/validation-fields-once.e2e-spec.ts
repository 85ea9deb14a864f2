import { useApi } from './support/api';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
};
type Doc = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
};

/** Values of every JSON type but the ones `schema` takes (arrays also with a wrong-typed value inside). */
function wrongValues(schema: Schema): unknown[] {
  const types = new Set([schema.type ?? []].flat());
  if (schema.enum) types.add(typeof schema.enum[0]);
  const all: Array<[string, unknown]> = [
    ['string', 7],
    ['string', true],
    ['number', 'x'],
    ['boolean', 'yes'],
    ['array', 'x'],
    ['object', 'x'],
    ['null', {}],
    ['string', ['a']],
    ['string', { a: 1 }],
    ['string', null],
  ];
  const out = all.filter(([t]) => !(types.has(t) || (t === 'number' && types.has('integer')))).map(([, v]) => v);
  if (types.has('array')) out.push([7], [{}], [null], [[]]);
  return out;
}

/** Each field a message names: problems are `<field>: <what is wrong>`, joined by `; `. */
const namedFields = (message: string): string[] => message.split('; ').map((p) => p.slice(0, Math.max(0, p.indexOf(': '))));

const UNTHROTTLED = {
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '10000000',
  SCIM_RATE_LIMIT_PER_SECOND: '1000000',
  SCIM_RATE_LIMIT_BURST: '10000000',
};

/** Runs `tasks` with at most `width` of them in flight at once. */
async function inFlight(width: number, tasks: Array<() => Promise<void>>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/**
 * One field, one message: for every operation that takes a JSON body (REST and SCIM, as the served
 * OpenAPI document lists them), a wrong-typed value in any field is described once, naming the field once,
 * and never answered 500 (nor 429, which would mean validation was never reached).
 */
describe('validation messages name each field at most once', () => {
  // Unthrottled: a request answered 429 never reached validation, so it would prove nothing.
  const { api, t } = useApi({ tenant: true, env: UNTHROTTLED });

  // Hundreds of requests: they go a few at a time (each waits on Postgres more than on the
  // api's one thread), and the limit is sized for a loaded 2-core machine, not for the quick case.
  it('for wrong-typed values of every field of every JSON body, alone and all at once', async () => {
    const doc = (await api.http().get('/v1/openapi.json')).body as Doc;
    const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s);
    const fieldsOf = (s: Schema): Record<string, Schema> => {
      const r = resolve(s);
      return Object.assign({}, r.properties ?? {}, ...[...(r.allOf ?? []), ...(r.oneOf ?? []), ...(r.anyOf ?? [])].map(fieldsOf));
    };
    const operations: Array<{ method: string; path: string; fields: Record<string, Schema> }> = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        if (schema)
          operations.push({
            method,
            path: path.replace(/\{[^}]+\}/g, '1'),
            fields: Object.fromEntries(Object.entries(fieldsOf(schema)).map(([k, v]) => [k, resolve(v)])),
          });
      }
    }
    expect(operations.length).toBeGreaterThanOrEqual(8);
    const doubled: string[] = [];
    const send = async (method: string, path: string, body: unknown) => {
      const res = await (api.http() as any)[method](path).set(t.auth).send(body);
      const message: string = res.body?.error?.message ?? '';
      const seen = namedFields(message).filter(Boolean);
      const twice = seen.filter((f, i) => seen.indexOf(f) !== i);
      if (res.status >= 500 || res.status === 429 || twice.length)
        doubled.push(`${method.toUpperCase()} ${path} ${JSON.stringify(body)} → ${res.status} ${message}`);
    };
    const requests: Array<() => Promise<void>> = [];
    for (const { method, path, fields } of operations) {
      expect(Object.keys(fields).length).toBeGreaterThan(0);
      const allWrong: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(fields)) {
        const wrong = wrongValues(schema);
        allWrong[name] = wrong[0];
        for (const value of wrong) requests.push(() => send(method, path, { [name]: value }));
      }
      requests.push(() => send(method, path, allWrong));
    }
    await inFlight(4, requests);
    expect(doubled).toEqual([]);
  }, 120_000);
});
