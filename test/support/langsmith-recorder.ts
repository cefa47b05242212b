/**
 * A stand-in for the LangSmith API on loopback, for tests: it records every request and answers
 * the part of the API the `langsmith` client uses to upload a run (server info, datasets,
 * examples through the multipart endpoint, projects, runs, feedback) with plausible bodies, so
 * no test ever reaches a real endpoint. Anything else answers 404 and is recorded too.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Verbatim, the x-api-key included. */
  headers: IncomingHttpHeaders;
  /** A JSON body, parsed. */
  json?: any;
  /** A multipart body: each part's name and its text parsed as JSON. */
  parts?: Record<string, any>;
  status: number;
}

interface StoredExample {
  id: string;
  dataset_id: string;
  inputs: unknown;
  outputs: unknown;
  metadata: Record<string, unknown>;
  created_at: string;
}

export class LangSmithRecorder {
  readonly calls: RecordedCall[] = [];
  readonly datasets = new Map<string, { id: string; name: string; description: string | null; created_at: string; modified_at: string }>();
  readonly examples = new Map<string, StoredExample>();
  readonly projects = new Map<string, { id: string; name: string; reference_dataset_id: string | null }>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<LangSmithRecorder> {
    let recorder: LangSmithRecorder | undefined;
    const server = createServer((req, res) => {
      recorder!.handle(req, res).catch((err: unknown) => send(res, 500, { detail: String(err) }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    recorder = new LangSmithRecorder(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return recorder;
  }

  /** The calls with this method whose path matches. */
  find(method: string, path: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && path.test(c.path));
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://recorder');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const call: RecordedCall = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, status: 0 };
    const type = req.headers['content-type'] ?? '';
    if (type.startsWith('application/json') && body.length > 0) call.json = JSON.parse(body.toString('utf8'));
    if (type.startsWith('multipart/form-data')) {
      const form = await new Request(url, { method: 'POST', headers: { 'content-type': type }, body }).formData();
      call.parts = {};
      for (const [name, value] of form.entries()) call.parts[name] = JSON.parse(typeof value === 'string' ? value : await value.text());
    }
    this.calls.push(call);
    const [status, answer] = this.answer(call);
    call.status = status;
    send(res, status, answer);
  }

  private answer(call: RecordedCall): [number, unknown] {
    const { method, path, query } = call;
    const now = new Date().toISOString();
    if (method === 'GET' && path === '/info') {
      return [200, { version: '0.0.0-recorder', instance_flags: { dataset_examples_multipart_enabled: true }, batch_ingest_config: { use_multipart_endpoint: true } }];
    }
    if (method === 'GET' && path === '/datasets') {
      return [200, [...this.datasets.values()].filter((d) => !query.has('name') || d.name === query.get('name'))];
    }
    if (method === 'POST' && path === '/datasets') {
      if ([...this.datasets.values()].some((d) => d.name === call.json.name)) return [409, { detail: 'Dataset already exists' }];
      const dataset = { id: randomUUID(), name: call.json.name, description: call.json.description ?? null, created_at: now, modified_at: now };
      this.datasets.set(dataset.id, dataset);
      return [200, dataset];
    }
    const upload = /^\/v1\/platform\/datasets\/([^/]+)\/examples$/.exec(path);
    if (method === 'POST' && upload) {
      if (!this.datasets.has(upload[1])) return [404, { detail: 'Dataset not found' }];
      const ids = Object.keys(call.parts ?? {}).filter((name) => !name.includes('.'));
      for (const id of ids) {
        const part = call.parts![id];
        this.examples.set(id, { id, dataset_id: upload[1], inputs: call.parts![`${id}.inputs`], outputs: call.parts![`${id}.outputs`], metadata: part.metadata ?? {}, created_at: now });
      }
      return [201, { example_ids: ids, count: ids.length }];
    }
    if (method === 'GET' && path === '/examples') {
      const all = [...this.examples.values()].filter((e) => e.dataset_id === query.get('dataset'));
      const offset = Number(query.get('offset') ?? 0);
      return [200, all.slice(offset, offset + Number(query.get('limit') ?? 100))];
    }
    const example = /^\/examples\/([^/]+)$/.exec(path);
    if (method === 'GET' && example) {
      const found = this.examples.get(example[1]);
      return found ? [200, found] : [404, { detail: 'Example not found' }];
    }
    if (method === 'POST' && path === '/sessions') {
      const existing = this.projects.get(call.json.name);
      if (existing && query.get('upsert') !== 'true') return [409, { detail: 'Project already exists' }];
      const project = existing ?? { id: randomUUID(), name: call.json.name, reference_dataset_id: call.json.reference_dataset_id ?? null };
      this.projects.set(project.name, project);
      return [200, { ...project, start_time: now, extra: call.json.extra ?? {} }];
    }
    if (method === 'POST' && path === '/runs') return [202, {}];
    if (method === 'POST' && path === '/feedback') return [200, { id: call.json.id }];
    return [404, { detail: `no route ${method} ${path}` }];
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
