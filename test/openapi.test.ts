import { TestBrowser } from './support/browser.js';
import { TestSystem } from './support/system.js';
import { waitUntil } from './support/event-waits.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string; type?: string; oneOf?: unknown[] } }> }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  security: Array<Record<string, string[]>>;
  components: { securitySchemes: Record<string, Record<string, string>>; schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

/**
 * The routes the running gateway's router mapped, as `METHOD /path/{param}`: Nest logs each
 * one as `Mapped {/path/:param, METHOD} route` while it starts (at log level info).
 */
function mappedRoutes(output: string[]): string[] {
  const routes = new Set<string>();
  for (const line of output) {
    const match = /Mapped \{(\/[^,]*), (\w+)\} route/.exec(line);
    if (match) routes.add(`${match[2]} ${match[1].replace(/:(\w+)/g, '{$1}')}`);
  }
  return [...routes].sort();
}

function documentedRoutes(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/** The OpenAPI document at /docs/openapi.json and Swagger UI at /docs (issue 13). */
describe('the OpenAPI document', () => {
  let system: TestSystem;
  let document: OpenApiDocument;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_LOG_LEVEL: 'info' } });
    // The logger writes asynchronously: its route lines may reach the pipe after the ready line,
    // which goes straight to stdout. Nest's last line at start comes after every route's.
    await waitUntil(() => system.gateway.output.some((line) => line.includes('Nest application successfully started')));
    const res = await fetch(`${system.url}/docs/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('has every route the gateway registers, and none it does not', () => {
    const mapped = mappedRoutes(system.gateway.output);
    // The log was read: the REST API, the OpenAI-compatible API and the admin routes are there.
    expect(mapped).toEqual(expect.arrayContaining(['POST /api/v1/chat', 'GET /api/v1/runs/{runId}/events', 'POST /v1/chat/completions', 'GET /v1/models', 'DELETE /api/v1/admin/api-keys/{keyId}', 'GET /api/v1/health/ready']));
    expect(document.openapi).toMatch(/^3\./);
    expect(documentedRoutes(document)).toEqual(mapped);
  });

  it('documents the auth header on every route but health, and the error body on every route', () => {
    expect(document.components.securitySchemes.api_key).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // The bearer token is the same opaque API key, not a JWT.
    expect(document.components.securitySchemes.bearer).not.toHaveProperty('bearerFormat');
    expect(document.security).toEqual([{ api_key: [] }, { bearer: [] }]);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        // Health, what authorization servers and browsers reach for an MCP sign-in, and the A2A agent
        // card (discovery) need no key (an empty requirement); everything else inherits the document's.
        const open = path.startsWith('/api/v1/health') || path.startsWith('/api/v1/mcp/oauth/') || path === '/.well-known/agent-card.json';
        expect([where, operation.security]).toEqual([where, open ? [{}] : undefined]);
        const schema = operation.responses.default?.content?.['application/json']?.schema?.$ref;
        // Each dialect answers errors in its own shape: OpenAI's under /v1, JSON-RPC's on the A2A endpoint.
        const errorBody = path.startsWith('/v1/') ? 'OpenAiErrorBody' : path === '/api/v1/a2a' ? 'A2aRpcErrorBody' : 'ApiErrorBody';
        expect([where, schema]).toEqual([where, `#/components/schemas/${errorBody}`]);
      }
    }
    expect(document.components.schemas.ApiErrorBody).toMatchObject({ required: ['error_code', 'message', 'details'] });
    expect(Object.keys(document.components.schemas.OpenAiErrorBody.properties ?? {})).toEqual(['error']);
  });

  it('documents the body of every answer: a 2xx with a schema on every operation (or 204 for none), and a schema on every error', () => {
    const undocumented: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(operation.responses);
        // A redirect (the start of an MCP sign-in) answers with a Location, not a body.
        const redirects = statuses.some((status) => /^3\d\d$/.test(status));
        if (!redirects && !statuses.some((status) => /^2\d\d$/.test(status) && status !== '204')) undocumented.push(`${where}: no 2xx answer with a body`);
        for (const status of statuses) {
          const content = Object.entries(operation.responses[status].content ?? {});
          if (status === '204' || /^3\d\d$/.test(status)) {
            if (content.length > 0) undocumented.push(`${where} ${status}: a body on No Content`);
            continue;
          }
          if (content.length === 0) undocumented.push(`${where} ${status}: no content`);
          for (const [media, { schema }] of content) {
            // A schema with nothing in it (no $ref, type or combinator) is typed as unknown by client generators.
            if (!schema || !(schema.$ref || schema.type || schema.oneOf)) undocumented.push(`${where} ${status} ${media}: no schema`);
          }
        }
      }
    }
    expect(undocumented).toEqual([]);
    // The answers are schemas of their own, named for what they hold.
    const ok = (path: string, method: string, status = '200') => document.paths[path][method].responses[status].content?.['application/json']?.schema?.$ref;
    expect(ok('/api/v1/sessions/{id}/messages', 'get')).toBe('#/components/schemas/MessageList');
    expect(ok('/api/v1/sessions', 'post', '201')).toBe('#/components/schemas/SessionView');
    expect(ok('/api/v1/chat', 'post')).toBe('#/components/schemas/ChatAnswer');
    expect(ok('/v1/chat/completions', 'post')).toBe('#/components/schemas/ChatCompletion');
    expect(document.paths['/api/v1/runs/{runId}/events'].get.responses['204']).toBeDefined();
  });

  it('describes request bodies and query parameters from the DTOs', () => {
    const chat = document.paths['/api/v1/chat'].post as Operation & { requestBody: { content: Record<string, { schema: { $ref: string } }> } };
    expect(chat.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ChatRequestDto');
    expect(document.components.schemas.ChatRequestDto).toMatchObject({ required: ['message'], properties: { message: {}, session_id: {}, assistant_id: {} } });
    // Every property has its type: none falls back to an empty `Object` schema.
    expect(Object.keys(document.components.schemas)).not.toContain('Object');
    const sessions = document.paths['/api/v1/sessions'].get as Operation & { parameters: Array<{ name: string; in: string }> };
    expect(sessions.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:limit', 'query:offset']);
  });

  it('serves Swagger UI at /docs from the gateway alone, listing every operation', async () => {
    const res = await fetch(`${system.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await res.text()).toContain('swagger-ui-bundle.js');

    const browser = await TestBrowser.launch();
    try {
      const watched = await browser.open(system.url);
      await watched.page.goto('/docs');
      const operations = watched.page.locator('.opblock');
      await operations.first().waitFor({ timeout: 30_000 });
      expect(await operations.count()).toBe(documentedRoutes(document).length);
      expect(watched.foreignRequests()).toEqual([]);
      expect(watched.unexpectedConsoleErrors()).toEqual([]);
      await watched.close();
    } finally {
      await browser.close();
    }
  });
});
