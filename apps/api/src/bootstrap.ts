import { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { ConnectionRateLimit, KeyGate, keyCheck, PublicRoutes } from '@web/auth';
import { AppConfig } from '@kernel/config';
import {
  answerClientErrors,
  answerHalfClosedRequests,
  ApiExceptionFilter,
  ApiValidationPipe,
  assignRequestId,
  bodyParsing,
  cutStalledBodies,
  ignoreConditionalHeaders,
  NODE_MAX_HEADER_SIZE,
  refuseLargeHead,
  renderError,
  RouteTable,
  serverTimeouts,
} from '@web/http';
import { Logger, PinoLogger } from 'nestjs-pino';
import { requestLog } from '@kernel/logging';
import { Metrics } from '@kernel/metrics';
import { ApiModule } from './api.module';
import { CONSOLE_AREA } from '@web/console';
import { documentJsonLimit } from '@features/documents/http';
import { requestMetrics } from './metrics/request-metrics';
import { OpenApiDocument, recordedExamples } from '@web/openapi';
import { scimOpenApiPart } from '@features/scim/http';
import { loadTls } from './tls';

/** Paths whose POST also takes multipart/form-data (parsed by their own handler). */
export const MULTIPART_PATHS = ['/v1/documents'];
/** Paths whose POST also takes application/x-www-form-urlencoded: HTML forms outside /v1/ (the invitation page, the Integrations section). */
export const URLENCODED_PATHS = ['/invitations/accept', '/console/*'];

/** Builds the api (HTTPS, envelopes, validation, request ids), initialised but not listening. */
export async function createApiApp(config: AppConfig = AppConfig.fromEnv(), extraModules: Type<unknown>[] = []): Promise<NestExpressApplication> {
  // A request without Host is answered by the front door, in the envelope, not by Node's bare 400.
  // Slow clients are cut (stalled headers, a stalled body, a whole request too slow): see slow-clients.ts.
  // Heads over 16 KB are refused by the front door, which knows the path (SCIM answers in its schema), not by Node.
  const httpsOptions = {
    ...(await loadTls(config)),
    requireHostHeader: false,
    maxHeaderSize: NODE_MAX_HEADER_SIZE,
    // A request followed by the client's half-close is answered (see answerHalfClosedRequests).
    allowHalfOpen: true,
    ...serverTimeouts(config.http),
  };
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(config, extraModules), {
    httpsOptions,
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  answerClientErrors(app.getHttpServer());
  answerHalfClosedRequests(app.getHttpServer());
  // A server error after listening (e.g. out of file descriptors on accept) is logged, not fatal.
  app.getHttpServer().on('error', (err: Error) => PinoLogger.root.error({ err }, 'https server error'));
  app.disable('x-powered-by');
  app.set('etag', false);
  ignoreConditionalHeaders(app.getHttpAdapter().getInstance());
  // The front door, as one express layer (each layer is matched and called on every request):
  // request id, request line, the key check and the connection's rate limit (before routing, so that an unknown path, a wrong
  // method or a bad body is refused 401 like any call without a valid key, and no body is read
  // for such a caller), then body parsing, which passes a request without a body straight on.
  // Filled once the routes are registered (below); read only when a request finishes.
  const routes = new RouteTable();
  // The request line and the request metrics share one `finish` listener and one clock reading.
  const startLog = requestLog(() => PinoLogger.root, config.metrics.enabled ? requestMetrics(app.get(Metrics), routes) : undefined);
  const parseBody = bodyParsing({
    multipartPaths: MULTIPART_PATHS,
    urlencodedPaths: URLENCODED_PATHS,
    // A text of DOCUMENT_MAX_TEXT_CHARS may need more than 1 MB of JSON; beyond its own limit the answer is 413 text_too_long.
    jsonLimits: { '/v1/documents': documentJsonLimit(config) },
  });
  // The Integrations section signs its people in with a session, not a key: every address under it,
  // known or not and with any method, is answered by the console (its pages, or its 404/405 page), never the API's 401.
  app.get(PublicRoutes).openArea(CONSOLE_AREA, { throttled: false });
  const checkKeyThenParse = keyCheck(app.get(KeyGate), app.get(PublicRoutes), app.get(ConnectionRateLimit), parseBody);
  const watchBody = cutStalledBodies(config.http.bodyIdleTimeoutMs);
  app.use((req: Request, res: Response, next: NextFunction) => {
    assignRequestId(req, res);
    startLog(req, res);
    watchBody(req, res);
    if (refuseLargeHead(req, res)) return;
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      return renderError(req, res, { code: 'invalid_request', message: 'An HTTP/1.1 request must carry a Host header.' });
    }
    checkKeyThenParse(req, res, next);
  });
  app.useGlobalFilters(new ApiExceptionFilter(routes));
  app.useGlobalPipes(new ApiValidationPipe());
  await app.init();
  routes.loadFrom(app.getHttpAdapter().getInstance());
  app.get(OpenApiDocument).build(app, { parts: [scimOpenApiPart()], examples: recordedExamples() });
  return app;
}
