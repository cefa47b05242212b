import 'reflect-metadata';
import { Controller, Get, Logger, Module, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { pino } from 'pino';
import type { INestApplication } from '@nestjs/common';
import { GatewayLogger } from './gateway-logger.js';
import { LoggingModule } from './logging.module.js';

type Line = Record<string, any>;

@Controller('things')
class ThingsController {
  private readonly logger = new Logger('things');

  @Get()
  list() {
    this.logger.log('listing things');
    return [];
  }

  @Get('broken')
  broken() {
    throw new Error('the thing broke');
  }
}

@Controller('health')
class ProbeController {
  @Get()
  check() {
    return { status: 'ok' };
  }
}

@Controller('v1/models')
class OutsideController {
  @Get()
  models() {
    return { data: [] };
  }
}

/** A gateway in miniature: the same prefix and exclusions as main.ts, logging to an array. */
async function start(lines: Line[]): Promise<{ app: INestApplication; url: string }> {
  const destination = { write: (text: string) => void lines.push(JSON.parse(text) as Line) };
  @Module({ imports: [LoggingModule.forRoot({ level: 'info', destination })], controllers: [ThingsController, ProbeController, OutsideController] })
  class TestModule {}
  const app = await NestFactory.create(TestModule, { bufferLogs: true });
  app.useLogger(app.get(GatewayLogger));
  app.setGlobalPrefix('api/v1', { exclude: [{ path: 'v1/models', method: RequestMethod.GET }] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}` };
}

describe('LoggingModule', () => {
  let app: INestApplication;
  let url: string;
  const lines: Line[] = [];

  beforeAll(async () => {
    ({ app, url } = await start(lines));
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The lines about one request, once its access line is written (after the answer is sent). */
  async function linesOf(requestId: string): Promise<Line[]> {
    for (let i = 0; i < 100 && !lines.some((l) => l.request_id === requestId && l.res); i++) await new Promise((r) => setTimeout(r, 10));
    return lines.filter((l) => l.request_id === requestId || l.req?.id === requestId);
  }

  it("puts the request's id on its access line and on every line logged while it is handled", async () => {
    const res = await fetch(`${url}/api/v1/things`, { headers: { 'x-request-id': 'req-7', 'x-api-key': 'secret-key-1' } });
    expect(res.headers.get('x-request-id')).toBe('req-7');
    const mine = await linesOf('req-7');
    expect(mine.find((l) => l.msg === 'listing things')).toMatchObject({ level: 30, context: 'things', request_id: 'req-7', service: 'gateway' });
    const access = mine.find((l) => l.res);
    expect(access).toMatchObject({ msg: 'request completed', request_id: 'req-7', req: { method: 'GET', url: '/api/v1/things' }, res: { statusCode: 200 } });
    // Headers carry keys and tokens: no line may hold them.
    expect(access!.req).not.toHaveProperty('headers');
    expect(JSON.stringify(lines)).not.toContain('secret-key-1');
  });

  it('answers an id of its own when the client sends none, or one unfit for a log', async () => {
    const given = await fetch(`${url}/api/v1/things`, { headers: { 'x-request-id': '../../etc' } });
    const id = given.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await linesOf(id!)).some((l) => l.res)).toBe(true);
  });

  it('logs the paths kept out of the prefix, and not the probes', async () => {
    const probe = await fetch(`${url}/api/v1/health`);
    expect(probe.status).toBe(200);
    // Answered after the probe: once its access line is in, the probe's would be too.
    const outside = await fetch(`${url}/v1/models`);
    expect(outside.status).toBe(200);
    expect((await linesOf(outside.headers.get('x-request-id')!)).find((l) => l.res)).toMatchObject({ req: { url: '/v1/models' } });
    expect(lines.some((l) => l.req?.url === '/api/v1/health')).toBe(false);
  });

  it("writes Nest's own error lines with their stack and context", async () => {
    const res = await fetch(`${url}/api/v1/things/broken`, { headers: { 'x-request-id': 'req-broken' } });
    expect(res.status).toBe(500);
    const error = (await linesOf('req-broken')).find((l) => l.level === 50 && !l.res);
    expect(error).toMatchObject({ context: 'ExceptionsHandler', msg: 'the thing broke', request_id: 'req-broken' });
    expect(JSON.stringify(error)).toContain('ThingsController.broken');
  });
});

describe('GatewayLogger outside a request', () => {
  function logger(): { log: GatewayLogger; lines: Line[] } {
    const lines: Line[] = [];
    const root = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    return { log: new GatewayLogger(root), lines };
  }

  it("maps Nest's calls to fields: context last, a stack before it, an object's fields as they are", () => {
    const { log, lines } = logger();
    log.log('started', 'NestApplication');
    log.error('it failed', 'Error: it failed\n    at somewhere (file.js:1:1)', 'ws');
    log.warn({ slow_client: 'abc' }, 'socket.io');
    log.error(new Error('plain'));
    log.debug('hidden');
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'started', context: 'NestApplication' }),
      expect.objectContaining({ level: 50, msg: 'it failed', context: 'ws', stack: 'Error: it failed\n    at somewhere (file.js:1:1)' }),
      expect.objectContaining({ level: 40, slow_client: 'abc', context: 'socket.io' }),
      expect.objectContaining({ level: 50, msg: 'plain', err: expect.objectContaining({ message: 'plain', type: 'Error' }) }),
    ]);
    expect(lines[3]).not.toHaveProperty('request_id');
  });
});
