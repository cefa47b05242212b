import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { leanFetch } from './lean-fetch.js';

/** A loopback server whose answers each test sets; it records what it received. */
describe('leanFetch against a loopback HTTP server', () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  let closedEarly: Array<() => void> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => handler(req, Buffer.concat(parts).toString('utf8'), res));
      res.on('close', () => {
        if (!res.writableFinished) for (const resolve of closedEarly.splice(0)) resolve();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const responseClosedEarly = () => new Promise<void>((resolve) => closedEarly.push(resolve));

  it('answers a POST as fetch does: status, headers, body', async () => {
    handler = (req, body, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req_9' });
      res.end(JSON.stringify({ method: req.method, url: req.url, auth: req.headers.authorization, body }));
    };
    const init = { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"q":1}' };

    const lean = await leanFetch(`${base}/v1/chat?x=1`, init);
    const reference = await fetch(`${base}/v1/chat?x=1`, init);

    expect(lean.status).toBe(reference.status);
    expect(lean.ok).toBe(true);
    expect(lean.headers.get('x-request-id')).toBe('req_9');
    expect(lean.headers.getSetCookie()).toEqual(reference.headers.getSetCookie());
    expect(await lean.json()).toEqual(await reference.json());
  });

  it('streams the body read by read, before the server ends it', async () => {
    let finish!: () => void;
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
      finish = () => res.end('data: 2\n\n');
    };
    const reader = (await leanFetch(`${base}/stream`, { method: 'POST', body: '{}' })).body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 2\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('decodes a gzip body, follows a redirect and gives a 204 no body', async () => {
    handler = (req, body, res) => {
      if (req.url === '/old') return void res.writeHead(307, { location: '/new' }).end();
      if (req.url === '/empty') return void res.writeHead(204).end();
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(`moved: ${body}`));
    };
    const moved = await leanFetch(`${base}/old`, { method: 'POST', body: 'payload' });
    expect(moved.headers.get('content-encoding')).toBeNull();
    expect(await moved.text()).toBe('moved: payload');
    const empty = await leanFetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('closes the connection when the body is cancelled', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    };
    const closed = responseClosedEarly();
    const reader = (await leanFetch(`${base}/stream`)).body!.getReader();
    await reader.read();
    await reader.cancel();
    await closed;
  });

  it('rejects with the signal reason when aborted before the headers, and errors the body when aborted after', async () => {
    handler = () => undefined; // never answers
    const early = new AbortController();
    const waiting = leanFetch(`${base}/slow`, { signal: early.signal });
    early.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });

    handler = (_req, _body, res) => {
      res.writeHead(200);
      res.write('part');
    };
    const late = new AbortController();
    const closed = responseClosedEarly();
    const reader = (await leanFetch(`${base}/stream`, { signal: late.signal })).body!.getReader();
    await reader.read();
    late.abort();
    await expect(reader.read()).rejects.toBeDefined();
    await closed;
  });

  it('rejects as fetch does when nothing listens', async () => {
    const gone = createServer();
    gone.listen(0, '127.0.0.1');
    await once(gone, 'listening');
    const url = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/`;
    await new Promise((resolve) => gone.close(resolve));

    const error = await leanFetch(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it('hands a body it does not stream itself to the global fetch', async () => {
    handler = (req, body, res) => res.end(`${req.headers['content-type']} ${body}`);
    const answer = await leanFetch(`${base}/form`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(await answer.text()).toBe('application/x-www-form-urlencoded;charset=UTF-8 a=1');
  });
});
