import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

const rewriteRefs = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `https://openapi.test/doc.json${v}` : rewriteRefs(v);
  }
  return out;
};

/** Checks answers against the api's own OpenAPI document (JSON Schema 2020-12, as 3.1 says). */
export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'https://openapi.test/doc.json', components: doc.components });
  }

  /** Throws with the schema errors when `body` does not match the documented answer. */
  check(method: string, path: string, status: number, body: unknown): void {
    const op = this.doc.paths?.[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    const response = op.responses?.[String(status)];
    if (!response) throw new Error(`${method} ${path} does not document status ${status}`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} ${status} documents no JSON body`);
    const validate = this.ajv.compile(rewriteRefs(schema) as Json);
    if (!validate(body)) {
      throw new Error(`${method} ${path} ${status} does not match the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
    }
  }
}
