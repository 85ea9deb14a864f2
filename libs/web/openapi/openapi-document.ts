import { INestApplication, Injectable } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { createHash } from 'node:crypto';
import { AppConfig } from '@kernel/config';
import { API_DESCRIPTION, TAG_DESCRIPTIONS } from './api-description';
import { addExamples, OperationExamples } from './openapi-examples';
import { finishDocument } from './openapi-post-process';
import { webhooksSection } from './webhooks-description';

/**
 * A part of the description the controllers' decorators cannot give (an interface whose bodies
 * are not DTOs, such as SCIM's): its paths, component schemas and tags, merged as they are. Its
 * operations get the common error answers and answer headers as every other operation does.
 */
export interface OpenApiPart {
  paths: Record<string, unknown>;
  schemas?: Record<string, unknown>;
  tags?: Array<{ name: string; description?: string }>;
}

/** What the api adds to the generated description: parts it composes, and the recorded examples. */
export interface OpenApiSources {
  parts?: OpenApiPart[];
  examples?: Record<string, OperationExamples>;
}

/**
 * Every tag in the order a reader meets it (the first operation of each, then the events), with
 * the descriptions given: renderers list tags in the order of `tags`.
 */
function orderedTags(doc: OpenAPIObject, described: Array<{ name: string; description?: string }>): Array<{ name: string; description?: string }> {
  const names: string[] = [];
  const operations = [...Object.values(doc.paths ?? {}), ...Object.values((doc as { webhooks?: Record<string, object> }).webhooks ?? {})];
  for (const item of operations)
    for (const op of Object.values(item) as Array<{ tags?: string[] }>) for (const t of op?.tags ?? []) if (!names.includes(t)) names.push(t);
  return names.map((name) => ({
    name,
    ...(described.find((t) => t.name === name)?.description ? { description: described.find((t) => t.name === name)!.description } : {}),
  }));
}

/** The OpenAPI 3.1 description, generated from the code once at start, with a strong ETag. */
@Injectable()
export class OpenApiDocument {
  private doc?: OpenAPIObject;
  private serialised = '';
  private tag = '';

  build(app: INestApplication, sources: OpenApiSources = {}): void {
    const { publicBaseUrl } = app.get(AppConfig, { strict: false });
    const config = new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Integrations API')
      .setDescription(API_DESCRIPTION)
      .setVersion('1.0.0')
      .addServer(publicBaseUrl, 'This installation (its configured public address, PUBLIC_BASE_URL).')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'svc_ followed by 64 lowercase hex characters' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build();
    const generated = SwaggerModule.createDocument(app, config);
    for (const part of sources.parts ?? []) {
      Object.assign(generated.paths, part.paths);
      generated.components = { ...generated.components, schemas: { ...(generated.components?.schemas ?? {}), ...(part.schemas ?? {}) } as never };
      generated.tags = [...(generated.tags ?? []), ...(part.tags ?? [])];
    }
    const doc = finishDocument(generated);
    const { webhooks, schemas, tag } = webhooksSection();
    (doc as unknown as Record<string, unknown>).webhooks = webhooks;
    doc.tags = orderedTags(doc, [...Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description })), ...(doc.tags ?? []), tag]);
    doc.components!.schemas = { ...(doc.components!.schemas ?? {}), ...schemas } as never;
    addExamples(doc, sources.examples ?? {});
    this.doc = doc;
    this.serialised = JSON.stringify(this.doc);
    this.tag = `"${createHash('sha256').update(this.serialised).digest('hex')}"`;
  }

  get json(): string {
    return this.serialised;
  }

  get etag(): string {
    return this.tag;
  }

  get document(): OpenAPIObject | undefined {
    return this.doc;
  }
}
