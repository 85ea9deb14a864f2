import { INestApplication, Injectable } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { createHash } from 'node:crypto';
import { API_DESCRIPTION } from './api-description';
import { finishDocument } from './openapi-post-process';

/** The OpenAPI 3.1 description, generated from the code once at start, with a strong ETag. */
@Injectable()
export class OpenApiDocument {
  private doc?: OpenAPIObject;
  private serialised = '';
  private tag = '';

  build(app: INestApplication): void {
    const config = new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Integrations API')
      .setDescription(API_DESCRIPTION)
      .setVersion('1.0.0')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'svc_ followed by 64 lowercase hex characters' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build();
    this.doc = finishDocument(SwaggerModule.createDocument(app, config));
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
