import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { ApiErrorBody } from '../common/api-error-body.dto.js';

/** Where the interactive docs live; the document itself is at {@link OPENAPI_JSON_PATH}. */
export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/docs/openapi.json';

/**
 * Swagger UI's scripts and styles come from swagger-ui-dist in node_modules, served here; its
 * page carries inline styles. Nothing else loads: the docs work on a machine without internet.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Builds the OpenAPI 3 document from the controllers and DTOs and serves it with Swagger UI at
 * `/docs` (JSON at `/docs/openapi.json`). Call after the global prefix is set: the paths carry it.
 * The document is built at its first request, not at start: scanning every controller and DTO
 * takes about 200 ms of a gateway's start, and most gateways never serve it.
 */
export function serveApiDocs(app: NestExpressApplication, version: string): void {
  const config = new DocumentBuilder()
    .setTitle('DataAgent')
    .setVersion(version)
    .setDescription(
      'LLM agent chats over REST, Server-Sent Events and an OpenAI-compatible API (`/v1`). Socket.IO (`/chat`) and plain WebSocket ' +
        '(`/ws/chat/{session_id}`) carry the same events; see docs/api.md. Every error is `{error_code, message, details}` ' +
        "(OpenAI's `{error: {...}}` under `/v1`) with its HTTP status.",
    )
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (DATAAGENT_API_KEYS or issued by an admin)' }, 'api_key')
    // Not addBearerAuth(): it declares `bearerFormat: JWT`, and the token is the same opaque API key.
    .addSecurity('bearer', { type: 'http', scheme: 'bearer', description: 'The same API key as `Authorization: Bearer <key>`, as OpenAI clients send it' })
    // Either scheme: a route that needs no key says so itself (`@Public()`).
    .addSecurityRequirements('api_key')
    .addSecurityRequirements('bearer')
    .build();
  let document: OpenAPIObject | undefined;
  const build = () => (document ??= withErrorBodies(SwaggerModule.createDocument(app, config, { extraModels: [ApiErrorBody] })));
  app.use(DOCS_PATH, (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  SwaggerModule.setup(DOCS_PATH, app, build, {
    raw: ['json'],
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    customSiteTitle: 'DataAgent API',
    // Swagger UI would otherwise send the document to an online validator.
    swaggerOptions: { validatorUrl: null },
  });
}

/** Operations without a default response of their own (the OpenAI-compatible ones have one) answer errors as `{error_code, message, details}`. */
function withErrorBodies(document: OpenAPIObject): OpenAPIObject {
  const error = {
    description: 'An error: the status and `error_code` say which (401 without a valid key, 422 naming each bad field, 429 and 503 with Retry-After, ...)',
    content: { 'application/json': { schema: { $ref: getSchemaPath(ApiErrorBody) } } },
  };
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (operation) operation.responses.default ??= error;
    }
  }
  return document;
}
