export * from './openapi-document';
export * from './openapi-examples';
export * from './openapi.module';
export * from './webhooks-description';
