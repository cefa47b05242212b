import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo, type Socket as NetSocket } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import { startGateway } from './support/app-processes.js';
import { assertWellFormedRun, chatOverSocket } from './support/chat-clients.js';
import { EventCollector, sendChat, waitUntil, runEvent } from './support/event-waits.js';
import { isRunning, processTable } from './support/process-tree.js';
import { checkMetrics } from './support/promtool.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * DATAAGENT_WORKERS=2: one gateway primary and two gateway processes on one port, no sticky
 * sessions. Which process serves a connection is read from the kernel, not asked of the gateway:
 * the server end of the client's TCP connection is a socket in exactly one process's fd table.
 */
describe('a gateway of two processes on one port (DATAAGENT_WORKERS=2)', () => {
  let system: TestSystem;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_WORKERS: '2' } });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    await system?.stop();
  });

  const primary = () => system.gateway.proc.pid!;
  const children = () => processTable().filter((p) => p.ppid === primary()).map((p) => p.pid).sort((a, b) => a - b);

  /** The gateway process holding the server end of the connection from `localPort`, once one holds it. */
  async function servingPid(localPort: number): Promise<number> {
    let pid: number | undefined;
    await waitUntil(() => (pid = ownerOf(system.gateway.port, localPort, children())) !== undefined);
    return pid!;
  }

  /** A Socket.IO client over websocket, and the gateway process serving it. */
  async function connect(options: { transports?: string[]; tryAllTransports?: boolean } = {}): Promise<{ socket: Socket; pid: number }> {
    const { agent, connections } = capturingAgent();
    const socket = io(`${system.url}/chat`, { transports: ['websocket'], ...options, auth: { apiKey: TEST_API_KEY }, reconnection: false, forceNew: true, agent } as never);
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    return { socket, pid: await servingPid(connections.at(-1)!.localPort!) };
  }

  /** Socket.IO clients until one is served by `pid` (connections are dealt out in turn, so this takes one or two). */
  async function connectTo(pid: number): Promise<Socket> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const c = await connect();
      if (c.pid === pid) return c.socket;
      c.socket.disconnect();
    }
    throw new Error(`no connection landed on gateway process ${pid}`);
  }

  /** An HTTP keep-alive connection served by `pid`, for REST calls on that process. */
  async function restOn(pid: number): Promise<{ call: (method: string, path: string) => Promise<{ status: number; body: any }>; close: () => void }> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { agent, connections } = capturingAgent({ keepAlive: true, maxSockets: 1 });
      const call = (method: string, path: string) => request(agent, `${system.url}/api/v1${path}`, method);
      expect((await call('GET', '/health/live')).status).toBe(200);
      if ((await servingPid(connections[0]!.localPort!)) === pid) return { call, close: () => agent.destroy() };
      agent.destroy();
    }
    throw new Error(`no HTTP connection landed on gateway process ${pid}`);
  }

  it('runs two gateway processes under the primary and deals connections to both', async () => {
    expect(children()).toHaveLength(2);
    const served = new Set<number>();
    for (let i = 0; i < 6 && served.size < 2; i++) {
      const c = await connect();
      served.add(c.pid);
      c.socket.disconnect();
    }
    expect([...served].sort((a, b) => a - b)).toEqual(children());
  });

  it('streams a Socket.IO chat over websocket gaplessly to done on a socket of each process', async () => {
    const [a, b] = children();
    const onA = await connectTo(a!);
    const onB = await connectTo(b!);
    const runs = await Promise.all([onA, onB].map((socket) => chatOverSocket(socket, { message: '[[chunks:40]] [[slow:10]]' })));
    for (const run of runs) {
      assertWellFormedRun(run);
      expect(run.filter((e) => e.event_type === 'text').map((e) => e.content).join('').split(' ').filter(Boolean)).toHaveLength(40);
    }
    onA.disconnect();
    onB.disconnect();
  });

  it('ends a run streaming on one process with a REST cancel served by the other', async () => {
    const [a, b] = children();
    const socket = await connectTo(a!);
    const events = new EventCollector(socket);
    const ack = await sendChat(socket, { message: '[[chunks:500]] [[slow:20]]' });
    await events.next(runEvent(ack.run_id, 'text'));
    const rest = await restOn(b!);
    try {
      const answer = await rest.call('POST', `/chat/${ack.session_id}/cancel`);
      expect(answer).toMatchObject({ status: 200, body: { cancelled: true, run_ids: [ack.run_id] } });
    } finally {
      rest.close();
    }
    const done = await events.done(ack.run_id);
    expect(done.cancelled).toBe(true);
    assertWellFormedRun(events.ofRun(ack.run_id));
    expect(events.ofRun(ack.run_id).filter((e) => e.event_type === 'text').length).toBeLessThan(500);
    socket.disconnect();
  });

  it('serves /metrics for both processes together', async () => {
    const [a, b] = children();
    const onA = await connectTo(a!);
    const onB = await connectTo(b!);
    const scrape = async () => (await fetch(`${system.url}/metrics`)).text();
    const openSockets = /^dataagent_open_sockets\{transport="socketio"\} 2$/m;
    // Each process holds one of these sockets: only a sum over both processes reads 2 (once the
    // earlier tests' sockets are closed on the server's side too).
    await waitUntil(async () => openSockets.test(await scrape()));
    for (let i = 0; i < 4; i++) {
      const text = await scrape();
      expect(text).toMatch(/^dataagent_gateway_processes 2$/m);
      expect(text).toMatch(openSockets);
      // The queue's counts come once, not once per process.
      expect(text.match(/^# TYPE bullmq_jobs gauge$/gm)).toHaveLength(1);
    }
    // The primary's sum of the processes' registries passes Prometheus's linter too.
    expect(checkMetrics(await scrape())).toEqual({ status: 0, output: '' });
    onA.disconnect();
    onB.disconnect();
  });

  it('refuses Socket.IO long-polling with a message that names the websocket transport', async () => {
    const res = await fetch(`${system.url}/socket.io/?EIO=4&transport=polling`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toMatch(/2 processes .*long-polling is refused.*transports: \['websocket'\]/);
    await expect(connect({ transports: ['polling'] })).rejects.toThrow();
    // A client that falls back to the next transport gets in over websocket.
    const fallback = await connect({ transports: ['polling', 'websocket'], tryAllTransports: true });
    expect(fallback.socket.io.engine.transport.name).toBe('websocket');
    fallback.socket.disconnect();
  });

  it('keeps serving on the other process when one is killed, and the primary starts a new one', async () => {
    const [victim, survivor] = children();
    const onSurvivor = await connectTo(survivor!);
    const onVictim = await connectTo(victim!);
    const victimGone = new Promise((resolve) => onVictim.once('disconnect', resolve));
    process.kill(victim!, 'SIGKILL');
    await victimGone;
    const run = await chatOverSocket(onSurvivor, { message: '[[chunks:20]] [[slow:5]]' });
    assertWellFormedRun(run);

    await waitUntil(() => children().length === 2 && !children().includes(victim!), 20_000);
    const replacement = children().find((pid) => pid !== survivor)!;
    await waitUntil(() => system.gateway.output.some((line) => line.includes('"gateway process listening"') && line.includes(`"pid":${replacement}`)), 20_000);
    expect(system.gateway.output.some((line) => line.includes('a gateway process exited; starting another') && line.includes(`"child_pid":${victim}`))).toBe(true);
    const onReplacement = await connectTo(replacement);
    assertWellFormedRun(await chatOverSocket(onReplacement, { message: '[[chunks:5]]' }));
    onReplacement.disconnect();
    onSurvivor.disconnect();
  });

  it('fails to start as a lone gateway does when its processes cannot listen', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(startGateway({ ...system.env, DATAAGENT_PORT: String(port) })).rejects.toThrow(/exited with 1[\s\S]*a gateway process failed to start/);
    } finally {
      taken.close();
    }
  });

  it('stops every process on SIGTERM to the primary', async () => {
    const before = children();
    await system.gateway.stop(20_000);
    expect(system.gateway.proc.signalCode).toBe('SIGTERM');
    for (const pid of before) expect(isRunning(pid)).toBe(false);
  });
});

/** An HTTP agent that remembers the TCP connections it opens. */
function capturingAgent(options: http.AgentOptions = {}): { agent: http.Agent; connections: NetSocket[] } {
  const agent = new http.Agent(options);
  const connections: NetSocket[] = [];
  const create = agent.createConnection.bind(agent);
  agent.createConnection = ((opts: unknown, callback: unknown) => {
    const socket = (create as (o: unknown, c: unknown) => NetSocket)(opts, callback);
    connections.push(socket);
    return socket;
  }) as typeof agent.createConnection;
  return { agent, connections };
}

function request(agent: http.Agent, url: string, method: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { 'x-api-key': TEST_API_KEY } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Which of `pids` holds the server end of the loopback connection `127.0.0.1:clientPort` →
 * `127.0.0.1:serverPort`: its inode from /proc/net/tcp, then the process with that socket open.
 */
function ownerOf(serverPort: number, clientPort: number, pids: number[]): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .find((f) => f[1] === `0100007F:${hex(serverPort)}` && f[2] === `0100007F:${hex(clientPort)}`);
  if (!row) return undefined;
  const link = `socket:[${row[9]}]`;
  return pids.find((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === link;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}
