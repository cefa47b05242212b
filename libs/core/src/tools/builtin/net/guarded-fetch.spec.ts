import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch, OutboundRequestError } from './guarded-fetch.js';
import type { Resolver } from './outbound-guard.js';

/** A loopback HTTP server that records every request it receives. */
interface LocalServer {
  server: Server;
  port: number;
  url: string;
  seen: string[];
}

async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<LocalServer> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://${host}:${port}`, seen };
}

const stop = (s: LocalServer) => new Promise<void>((resolve) => {
  s.server.closeAllConnections();
  s.server.close(() => resolve());
});

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(OutboundRequestError);
  expect((err as OutboundRequestError).code).toBe(code);
}

describe('guardedFetch against loopback servers', () => {
  let first: LocalServer;
  let second: LocalServer;

  beforeAll(async () => {
    const echoHeaders = (req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
    second = await startServer((req, res) => (req.url === '/headers' ? echoHeaders(req, res) : res.end('second')));
    first = await startServer((req, res) => {
      if (req.url === '/to-second') {
        res.writeHead(302, { location: `${second.url}/secret` }).end();
      } else if (req.url === '/to-second-headers') {
        res.writeHead(307, { location: `${second.url}/headers` }).end();
      } else if (req.url === '/to-self-headers') {
        res.writeHead(307, { location: '/headers' }).end();
      } else if (req.url === '/headers') {
        echoHeaders(req, res);
      } else if (req.url === '/to-self') {
        res.writeHead(301, { location: '/hello' }).end();
      } else if (req.url === '/loop') {
        res.writeHead(302, { location: '/loop' }).end();
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent < 64) res.once('drain', pump);
          else res.end();
        };
        pump();
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('late'), 5_000).unref();
      } else if (req.url === '/echo') {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body, host: req.headers.host })));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello');
      }
    });
  });

  afterAll(async () => {
    await Promise.all([stop(first), stop(second)]);
  });

  beforeEach(() => {
    first.seen.length = 0;
    second.seen.length = 0;
  });

  it('refuses a loopback server that is not allowlisted, and the server sees nothing', async () => {
    await expectCode(guardedFetch(`${first.url}/hello`), 'refused');
    await expectCode(guardedFetch(`http://2130706433:${first.port}/hello`), 'refused');
    await expectCode(guardedFetch(`http://localhost:${first.port}/hello`), 'refused');
    expect(first.seen).toEqual([]);
  });

  it('reaches an allowlisted server', async () => {
    const res = await guardedFetch(`${first.url}/hello`, {}, { allowlist: [`127.0.0.1:${first.port}`] });
    expect(res.status).toBe(200);
    expect(res.text()).toBe('hello');
    expect(first.seen).toEqual([`GET /hello host=127.0.0.1:${first.port}`]);
  });

  it('refuses a redirect from the allowlisted server to a non-allowlisted loopback port, which sees nothing', async () => {
    await expectCode(guardedFetch(`${first.url}/to-second`, {}, { allowlist: [`127.0.0.1:${first.port}`] }), 'refused');
    expect(first.seen).toHaveLength(1);
    expect(second.seen).toEqual([]);
  });

  it('follows a redirect that stays on an allowlisted target', async () => {
    const res = await guardedFetch(`${first.url}/to-self`, {}, { allowlist: [`127.0.0.1:${first.port}`] });
    expect(res).toMatchObject({ status: 200, redirects: 1, url: `${first.url}/hello` });
  });

  it('stops after maxRedirects hops', async () => {
    await expectCode(guardedFetch(`${first.url}/loop`, {}, { allowlist: [`127.0.0.1:${first.port}`], maxRedirects: 3 }), 'too_many_redirects');
    expect(first.seen).toHaveLength(4);
  });

  it('aborts a body that grows past maxBytes', async () => {
    await expectCode(guardedFetch(`${first.url}/big`, {}, { allowlist: [`127.0.0.1:${first.port}`], maxBytes: 100_000 }), 'too_large');
  });

  it('gives up at the deadline', async () => {
    await expectCode(guardedFetch(`${first.url}/slow`, {}, { allowlist: [`127.0.0.1:${first.port}`], timeoutMs: 200 }), 'timeout');
  });

  it('sends method and body', async () => {
    const res = await guardedFetch(`${first.url}/echo`, { method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } }, { allowlist: [`127.0.0.1:${first.port}`] });
    expect(JSON.parse(res.text())).toMatchObject({ method: 'POST', body: 'payload' });
  });

  describe('headers across a redirect', () => {
    const sent = {
      authorization: 'Bearer secret-1',
      cookie: 'session=secret-2',
      'proxy-authorization': 'Basic secret-3',
      'X-Api-Key': 'secret-4',
      'api-key': 'secret-5',
      'x-auth-token': 'secret-6',
      'private-token': 'secret-7',
      'x-vendor-signature': 'secret-8',
      accept: 'application/json',
      'accept-language': 'fr',
      'user-agent': 'dataagent-test',
    };
    const both = () => ({ allowlist: [`127.0.0.1:${first.port}`, `127.0.0.1:${second.port}`] });

    it('keeps only benign headers when the redirect goes to another origin (another port)', async () => {
      const res = await guardedFetch(`${first.url}/to-second-headers`, { headers: sent }, both());
      expect(res.url).toBe(`${second.url}/headers`);
      const received = JSON.parse(res.text()) as Record<string, string>;
      expect(received).toMatchObject({ accept: 'application/json', 'accept-language': 'fr', 'user-agent': 'dataagent-test' });
      expect(JSON.stringify(received)).not.toMatch(/secret-/);
    });

    it('keeps every header when the redirect stays on the same origin', async () => {
      const res = await guardedFetch(`${first.url}/to-self-headers`, { headers: sent }, both());
      const received = JSON.parse(res.text()) as Record<string, string>;
      expect(received).toMatchObject({ authorization: 'Bearer secret-1', 'x-api-key': 'secret-4', 'private-token': 'secret-7', 'x-vendor-signature': 'secret-8' });
    });
  });

  describe('a DNS lookup that never answers (no DNS traffic: the resolver is a fake)', () => {
    const silent: Resolver = () => new Promise<string[]>(() => undefined);

    it('fails as a timeout after lookupTimeoutMs', async () => {
      await expectCode(guardedFetch('http://silent.example/', {}, { resolver: silent, lookupTimeoutMs: 100 }), 'timeout');
    }, 10_000);

    it('fails as a timeout at the request deadline, whatever the lookup limit', async () => {
      await expectCode(guardedFetch('http://silent.example/', {}, { resolver: silent, lookupTimeoutMs: 600_000, timeoutMs: 100 }), 'timeout');
    }, 10_000);

    it('fails as aborted when the caller cancels', async () => {
      const caller = new AbortController();
      const pending = guardedFetch('http://silent.example/', { signal: caller.signal }, { resolver: silent, lookupTimeoutMs: 600_000 });
      caller.abort();
      await expectCode(pending, 'aborted');
    }, 10_000);
  });

  it('connects to the address the check approved, not to a fresh DNS answer (pinning)', async () => {
    // The system resolves "localhost" to 127.0.0.1 or ::1, where nothing listens on this port;
    // the fake resolver answers 127.0.0.2, where the server is. A response proves the socket
    // used the approved address instead of looking the name up again.
    const pinned = await startServer((req, res) => res.end(`pinned ${req.headers.host}`), '127.0.0.2');
    try {
      let lookups = 0;
      const resolver = async () => {
        lookups++;
        return ['127.0.0.2'];
      };
      const res = await guardedFetch(`http://localhost:${pinned.port}/`, {}, { allowlist: [`localhost:${pinned.port}`], resolver });
      expect(res.text()).toBe(`pinned localhost:${pinned.port}`);
      expect(lookups).toBe(1);
    } finally {
      await stop(pinned);
    }
  });
});
