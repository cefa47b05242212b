import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { TestSystem, TEST_API_KEY } from './support/system.js';
import { TYPED_CLIENT_PROGRAM } from './support/typed-client-program.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');
const OPERATOR_KEY = 'test-key-operator';

type Schema = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}
interface Exchange {
  method: string;
  path: string;
  status: number;
  type: string;
  body: unknown;
}

/**
 * An OpenAPI 3.0 schema of the document as JSON Schema for ajv: `nullable` becomes a null
 * alternative, references point into the document (registered as `openapi`), and an object
 * that lists its properties admits no others, so a field an answer carries but the document
 * does not name fails as surely as a missing one.
 */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const { nullable, example, ...rest } = schema as Schema;
  void example;
  const out: Schema = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'properties') out[key] = Object.fromEntries(Object.entries(value as Schema).map(([name, s]) => [name, toJsonSchema(s)]));
    else if (key === '$ref') out[key] = `openapi${String(value)}`;
    else if (key === 'enum') out[key] = value;
    else out[key] = toJsonSchema(value);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return nullable ? { anyOf: [out, { type: 'null' }] } : out;
}

/** Validates answers against the document's schemas. */
class AnswerValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value));
    this.ajv.addSchema({ components: { schemas: toJsonSchema(document.components.schemas) } }, 'openapi');
  }

  /** The problems of one exchange's body against the schema the document gives its status (else its default). */
  check(exchange: Exchange): string[] {
    const where = `${exchange.method} ${exchange.path} ${exchange.status}`;
    const responses = this.document.paths[exchange.path]?.[exchange.method.toLowerCase()]?.responses;
    if (!responses) return [`${where}: not in the document`];
    const documented = responses[String(exchange.status)];
    if (!documented && exchange.status < 400) return [`${where}: the status is not documented`];
    const response = documented ?? responses.default;
    if (exchange.status === 204) return response.content ? [`${where}: No Content documented with a body`] : [];
    const media = exchange.type.split(';')[0]!.trim();
    const schema = response.content?.[media]?.schema;
    if (!schema) return [`${where}: no schema for ${media}`];
    if (media === 'text/event-stream') return this.checkEvents(where, exchange.body as string);
    return this.errors(where, this.compile(schema), exchange.body);
  }

  /** Each `data` of a run's event stream against the run event schemas. */
  private checkEvents(where: string, text: string): string[] {
    const event = this.compile((this.document.components.schemas.ChatAnswer.properties as Record<string, { items: Schema }>).events.items);
    const data = text.split('\n').filter((line) => line.startsWith('data: '));
    if (data.length === 0) return [`${where}: an empty stream`];
    return data.flatMap((line) => this.errors(where, event, JSON.parse(line.slice('data: '.length))));
  }

  private compile(schema: Schema): ValidateFunction {
    return this.ajv.compile(toJsonSchema(schema) as Schema);
  }

  private errors(where: string, validate: ValidateFunction, body: unknown): string[] {
    if (validate(body)) return [];
    return [`${where}: ${this.ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 600)}`];
  }
}

/**
 * A typed client generated from the running gateway's /docs/openapi.json with openapi-typescript,
 * used through openapi-fetch by a program that tsc type-checks (strict) and node then runs against
 * the gateway: every answer it reads is typed, and every body it got matches its documented schema.
 */
describe('a client generated from the OpenAPI document', () => {
  let system: TestSystem;
  let dir: string;
  let document: OpenApiDocument;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-openapi-client-'));
    system = await TestSystem.start({
      workers: 1,
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${OPERATOR_KEY}:ops:olga:operator`,
        DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1',
      },
    });
    document = (await (await fetch(`${system.url}/docs/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('type-checks calls to every part of the API, and the answers at run time are what the types and schemas say', async () => {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    await run(process.execPath, [join(root, 'node_modules/openapi-typescript/bin/cli.js'), 'openapi.json', '--output', 'api.d.ts'], { cwd: dir });
    // A typed answer: nothing generated as `never` or an untyped object.
    const generated = readFileSync(join(dir, 'api.d.ts'), 'utf8');
    expect(generated).toMatch(/"application\/json": components\["schemas"\]\["ChatAnswer"\]/);

    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], outDir: 'out', noEmitOnError: true, skipLibCheck: true },
        files: ['program.ts', 'api.d.ts'],
      }),
    );
    writeFileSync(join(dir, 'program.ts'), TYPED_CLIENT_PROGRAM);
    const tsc = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: dir }).catch((err: { stdout: string }) => err);
    expect(tsc.stdout).toBe('');

    const output = join(dir, 'exchanges.json');
    const program = await run(process.execPath, [join(dir, 'out/program.js'), system.url, TEST_API_KEY, OPERATOR_KEY, output], { cwd: dir, timeout: 120_000 }).catch(
      (err: { stderr: string }) => err,
    );
    expect(program.stderr).toBe('');
    const { exchanges, facts } = JSON.parse(readFileSync(output, 'utf8')) as { exchanges: Exchange[]; facts: Record<string, unknown> };

    // What the program read through the types is what happened.
    expect(facts).toMatchObject({
      me: 'acme/alice',
      answer: expect.stringContaining('Tool write_todos returned: Todo list updated: 2 items'),
      roles: ['user', 'assistant', 'tool', 'assistant'],
      completion: 'Hello from the scripted LLM server.',
      revokedWithTenant: 0,
    });
    expect(facts.eventTypes).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'todo_update', 'tool_result', 'text', 'text', 'usage', 'text', 'done']);
    expect(facts.streamedTypes).toEqual(expect.arrayContaining(['hitl_request', 'file_operation', 'done']));

    // Chat, sessions, messages, MCP servers, tenants and keys were all called, and every answer matches its schema.
    const called = new Set(exchanges.map((e) => `${e.method} ${e.path}`));
    for (const operation of ['POST /api/v1/chat', 'POST /api/v1/chat/stream', 'GET /api/v1/runs/{runId}/events', 'GET /api/v1/sessions/{id}/messages', 'POST /api/v1/users/{userId}/mcp-servers', 'POST /api/v1/admin/tenants', 'POST /api/v1/admin/api-keys', 'POST /v1/chat/completions']) {
      expect([operation, called.has(operation)]).toEqual([operation, true]);
    }
    expect(exchanges.map((e) => e.status)).toEqual(expect.arrayContaining([200, 201, 204, 207, 404]));
    const validator = new AnswerValidator(document);
    expect(exchanges.flatMap((exchange) => validator.check(exchange))).toEqual([]);
  });
});
