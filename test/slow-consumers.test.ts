// e2e lane: alone (it bounds the gateway's RSS growth under 80 MB of stalled answers: another lane's load moves RSS and doubles its time)
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Socket as TcpSocket } from 'node:net';
import type { Socket } from 'socket.io-client';
import { connect as tcpConnect } from 'node:net';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, waitUntil, sendChat, sendMessage } from './support/event-waits.js';
import { defaultScript } from './support/scripted-llm-server.js';
import { clientFrame, parseServerFrames, rawUpgrade } from './support/raw-http.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const LIMIT = 256 * 1024;
const EVENTS = 5_000;
/** Per text chunk: a run of about 5 MB, more than loopback socket buffers hold for a client that reads nothing. */
const PAD = 1_000;
/** Per text chunk of the chat-completions answers: about 20 MB in all. */
const ANSWER_PAD = 4 * PAD;

/** What a stalled client had been sent once it reads again: its events, and why it was dropped. */
interface Stalled {
  kind: 'sse' | 'ws' | 'socket.io';
  socket: TcpSocket;
  /** Its own port: the gateway's line about dropping it names it. */
  port: number;
  read(): Promise<{ events: EventDict[]; reason?: string }>;
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

/** Resumes reading and collects everything until the server closes the connection. */
function drain(socket: TcpSocket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error('the server never closed the stalled connection')), 60_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.resume();
  });
}

async function stalledSse(url: string, runId: string): Promise<Stalled> {
  const socket = tcpConnect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  socket.write(`GET /api/v1/runs/${runId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${TEST_API_KEY}\r\n\r\n`);
  socket.pause();
  return {
    kind: 'sse',
    socket,
    port: socket.localPort!,
    read: async () => {
      const text = (await drain(socket)).toString('utf8');
      const events: EventDict[] = [];
      let reason: string | undefined;
      for (const block of text.split('\n\n')) {
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!data) continue;
        let parsed: EventDict;
        try {
          parsed = JSON.parse(data) as EventDict;
        } catch {
          continue; // a block cut by the drop
        }
        if (parsed.event_type === 'error' && parsed.error_code === 'slow_consumer') reason = 'slow_consumer';
        else if (parsed.seq > 0) events.push(parsed);
      }
      return { events, reason };
    },
  };
}

async function stalledWs(url: string, sessionId: string, runId: string): Promise<Stalled> {
  const { socket, status } = await rawUpgrade(url, `/ws/chat/${sessionId}`, { 'x-api-key': TEST_API_KEY });
  expect(status).toBe(101);
  socket.write(clientFrame(0x1, JSON.stringify({ type: 'resume', payload: { run_id: runId, after_seq: 0 } })));
  socket.pause();
  return {
    kind: 'ws',
    socket,
    port: socket.localPort!,
    read: async () => {
      const frames = parseServerFrames(await drain(socket));
      const events: EventDict[] = [];
      let reason: string | undefined;
      for (const frame of frames) {
        if (frame.opcode === 0x8) reason = `${frame.payload.readUInt16BE(0)} ${frame.payload.subarray(2).toString()}`;
        if (frame.opcode !== 0x1) continue;
        const body = JSON.parse(frame.payload.toString());
        if (typeof body.seq === 'number' && body.seq > 0 && body.event_type) events.push(body);
      }
      return { events, reason };
    },
  };
}

/** A Socket.IO client speaking engine.io over a raw socket, so that it can stop reading. */
async function stalledSocketIo(url: string, sessionId: string, runId: string): Promise<Stalled> {
  const { socket, status } = await rawUpgrade(url, '/socket.io/?EIO=4&transport=websocket');
  expect(status).toBe(101);
  socket.write(clientFrame(0x1, `40/chat,${JSON.stringify({ apiKey: TEST_API_KEY })}`));
  const early: Buffer[] = [];
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      early.push(chunk);
      if (!Buffer.concat(early).toString('latin1').includes('40/chat,{"sid"')) return;
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
  });
  socket.write(clientFrame(0x1, `42/chat,${JSON.stringify(['message', { type: 'resume', payload: { session_id: sessionId, run_id: runId, after_seq: 0 } }])}`));
  socket.pause();
  return {
    kind: 'socket.io',
    socket,
    port: socket.localPort!,
    read: async () => {
      const frames = parseServerFrames(Buffer.concat([...early, await drain(socket)]));
      const events: EventDict[] = [];
      let reason: string | undefined;
      for (const frame of frames) {
        const text = frame.payload.toString();
        if (frame.opcode !== 0x1 || !text.startsWith('42/chat,')) continue;
        const [name, body] = JSON.parse(text.slice('42/chat,'.length));
        if (name !== 'event') continue;
        if (body.error_code === 'slow_consumer') reason = 'slow_consumer';
        else if (typeof body.seq === 'number' && body.seq > 0) events.push(body);
      }
      return { events, reason };
    },
  };
}

/** A chat-completions stream that reads its first chunk (for the run id) and then nothing. */
async function stalledCompletion(url: string, message: string): Promise<{ runId: string; socket: TcpSocket }> {
  const socket = tcpConnect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  const body = JSON.stringify({ model: 'default', stream: true, messages: [{ role: 'user', content: message }] });
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  let head = '';
  const runId = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      head += chunk.toString('utf8');
      const id = /"id":"chatcmpl-([^"]+)"/.exec(head)?.[1];
      if (!id) return;
      socket.off('data', onData);
      socket.pause();
      resolve(id);
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`the stream closed before its first chunk:\n${head}`)));
  });
  return { runId, socket };
}

/**
 * A client that reads the whole run as a client should: dropped as a slow consumer (its
 * process starved of CPU on a busy machine can fall that far behind too), it reconnects and
 * resumes from the last seq it got, as the error tells it to.
 * @param onLive told of each event of its first connection (before any resume).
 */
async function readWhole(url: string, sessionId: string, runId: string, onLive?: (event: EventDict) => void): Promise<{ events: EventDict[]; drops: number }> {
  const events: EventDict[] = [];
  let drops = 0;
  for (;;) {
    const socket: Socket = await connectChat(url, TEST_API_KEY);
    try {
      const outcome = await new Promise<'done' | 'dropped'>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no done for ${runId} within 120 s`)), 120_000);
        const settle = (how: 'done' | 'dropped') => {
          clearTimeout(timer);
          resolve(how);
        };
        socket.on('event', (event: EventDict) => {
          if (event.event_type === 'error' && event.error_code === 'slow_consumer') return settle('dropped');
          if (event.run_id !== runId || !(event.seq > (events.at(-1)?.seq ?? 0))) return;
          events.push(event);
          if (drops === 0) onLive?.(event);
          if (event.event_type === 'done') settle('done');
        });
        sendMessage(socket, 'resume', { session_id: sessionId, run_id: runId, after_seq: events.at(-1)?.seq ?? 0 }).catch(reject);
      });
      if (outcome === 'done') return { events, drops };
      drops++;
    } finally {
      socket.disconnect();
    }
  }
}

function percentiles(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]?.toFixed(2) ?? '-';
  return `${at(0.5)}/${at(0.99)}`;
}

describe('clients that stop reading are dropped, not buffered without bound', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_CLIENT_BUFFER_MAX_BYTES: String(LIMIT) } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it(`drops 50 stalled SSE, WebSocket and Socket.IO clients of a ${EVENTS}-event run; they resume with no gap, and others get every event`, async () => {
    const owner = await connectChat(system.url, TEST_API_KEY);
    // The same stream with nobody stalled, for the latency a reading client sees anyway.
    const lagMs: number[] = [];
    const measure = (event: EventDict) => {
      const stamp = event.event_type === 'text' ? /⟨t=([\d.]+)⟩/.exec(event.content)?.[1] : undefined;
      if (stamp) lagMs.push(performance.timeOrigin + performance.now() - Number(stamp));
    };
    const quiet = await sendChat(owner, { message: `[[slow:1]] [[stamp]] [[chunks:500]] [[pad:${PAD}]]` });
    await readWhole(system.url, quiet.session_id, quiet.run_id, measure);
    const baseline = percentiles(lagMs.splice(0));

    // The model holds its first token until the stalled clients are attached; one chunk per
    // millisecond at most, so the clients that do read keep up on a busy machine.
    let attached!: () => void;
    const allAttached = new Promise<void>((resolve) => (attached = resolve));
    system.llm.setScript((req) => [{ until: allAttached }, ...defaultScript(req)]);
    const ack = await sendChat(owner, { message: `[[slow:1]] [[stamp]] [[chunks:${EVENTS}]] [[pad:${PAD}]]` });

    // Five clients that read; the first one's latency is measured.
    const readers = Array.from({ length: 5 }, (_, i) => readWhole(system.url, ack.session_id, ack.run_id, i === 0 ? measure : undefined));
    readers.forEach((reader) => reader.catch(() => undefined));

    const stalled: Stalled[] = [];
    for (let i = 0; i < 20; i++) stalled.push(await stalledSse(system.url, ack.run_id));
    for (let i = 0; i < 20; i++) stalled.push(await stalledWs(system.url, ack.session_id, ack.run_id));
    for (let i = 0; i < 10; i++) stalled.push(await stalledSocketIo(system.url, ack.session_id, ack.run_id));

    const pid = system.gateway.proc.pid!;
    const baselineKb = rssKb(pid);
    let peakKb = baselineKb;
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, rssKb(pid))), 50);
    attached();
    system.llm.setScript();
    // A dropped client gets DROP_GRACE_MS to take what was written, its reason last: each starts
    // reading once the gateway has dropped it (the line names its port), however long the run
    // still streams and whoever else is dropped meanwhile (a reading client on a starved machine
    // may be too: a count of drop lines would not tell them apart).
    const reading: Array<Promise<{ events: EventDict[]; reason?: string }> | undefined> = stalled.map(() => undefined);
    const droppedPorts = () =>
      new Set(system.gateway.output.map((line) => /dropping a slow client \(.*:(\d+)\)/.exec(line)?.[1]).filter((port) => port !== undefined).map(Number));
    await waitUntil(() => {
      const ports = droppedPorts();
      for (const [i, s] of stalled.entries()) if (!reading[i] && ports.has(s.port)) reading[i] = s.read();
      return reading.every((r) => r !== undefined);
    }, 60_000);
    let read: Array<{ events: EventDict[]; drops: number }>;
    try {
      read = await Promise.all(readers);
    } finally {
      clearInterval(sampler);
    }

    // Every client that kept reading saw the whole run, gapless (across its resumes, if dropped).
    const full = read[0]!.events;
    assertWellFormedRun(full);
    expect(full.filter((e) => e.event_type === 'text').length).toBeGreaterThanOrEqual(EVENTS);
    for (const { events } of read) expect(events).toEqual(full);

    // The stalled clients got a prefix, then the reason, then the close.
    const reads = await Promise.all(reading as Array<Promise<{ events: EventDict[]; reason?: string }>>);
    const summary = { sse: 0, ws: 0, 'socket.io': 0 };
    for (const [i, { events, reason }] of reads.entries()) {
      const kind = stalled[i].kind;
      expect({ kind, done: events.some((e) => e.event_type === 'done') }).toEqual({ kind, done: false });
      expect(events).toEqual(full.slice(0, events.length));
      expect({ kind, reason }).toEqual({ kind, reason: kind === 'ws' ? expect.stringMatching(/^4409 slow_consumer/) : 'slow_consumer' });
      summary[kind]++;
    }

    // Each resumes from the last seq it got and ends with exactly the full log (ten at a time).
    const resume = async (i: number, events: EventDict[]) => {
      const socket = await connectChat(system.url, TEST_API_KEY);
      const rest = new EventCollector(socket);
      try {
        await sendMessage(socket, 'resume', { session_id: ack.session_id, run_id: ack.run_id, after_seq: events.at(-1)?.seq ?? 0 });
        await rest.done(ack.run_id, 60_000);
        const joined = [...events, ...rest.ofRun(ack.run_id)];
        expect({ client: i, joined: joined.length }).toEqual({ client: i, joined: full.length });
        expect(joined).toEqual(full);
      } finally {
        socket.disconnect();
      }
    };
    for (let i = 0; i < reads.length; i += 10) await Promise.all(reads.slice(i, i + 10).map((read, j) => resume(i + j, read.events)));

    const grewMb = (peakKb - baselineKb) / 1024;
    const loaded = percentiles(lagMs);
    const runMb = full.reduce((n, e) => n + JSON.stringify(e).length, 0) / 1024 / 1024;
    process.stdout.write(
      `[slow consumers] ${full.length} events (${runMb.toFixed(1)} MB); dropped ${JSON.stringify(summary)} (and reading clients ${read.reduce((n, r) => n + r.drops, 0)} times); ` +
        `gateway RSS ${(baselineKb / 1024).toFixed(0)} MB → peak ${(peakKb / 1024).toFixed(0)} MB (+${grewMb.toFixed(1)} MB) with ${stalled.length} stalled clients; ` +
        `a reading client's LLM chunk → receive p50/p99 ${loaded} ms (the same stream with nobody stalled: ${baseline} ms)\n`,
    );
    // Unbounded buffering would hold about the whole run per stalled client: 50 × 5 MB.
    expect(grewMb).toBeLessThan(80);
    expect((await api(system.url, 'GET', '/health')).status).toBe(200);
    owner.disconnect();
  }, 240_000);

  it('lets a chat-completions client that stops reading go at the limit, and cancels the run nobody else can read', async () => {
    const CLIENTS = 4;
    const pid = system.gateway.proc.pid!;
    // Answers of the same chunks read whole first (a fifth as long: after a full-length warm-up the
    // growth measured next was the same, 17.8 MB): the gateway's heap grows to what streaming them
    // takes (young generation, code compiled), so the growth measured next is what it holds for nobody.
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const res = await fetch(`${system.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'default', stream: true, messages: [{ role: 'user', content: `[[chunks:${EVENTS / 5}]] [[pad:${ANSWER_PAD}]]` }] }),
        });
        expect(await res.text()).toContain('data: [DONE]');
      }),
    );
    const baselineKb = rssKb(pid);
    let peakKb = baselineKb;
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, rssKb(pid))), 50);
    // Each answer is about 20 MB over 5 s or more, far more than loopback socket buffers hold (about
    // 4.4 MB): read by nobody and held whole, 4 of them would be about 60 MB. A heap that grows
    // while 80 MB stream through it moves RSS by up to about 18 MB anyway.
    const asked = system.llm.requests.length;
    const stalled = await Promise.all(Array.from({ length: CLIENTS }, () => stalledCompletion(system.url, `[[slow:1]] [[chunks:${EVENTS}]] [[pad:${ANSWER_PAD}]]`)));
    try {
      // Until the model has been asked for every answer, and has streamed each or been cut short.
      await waitUntil(() => system.llm.requests.length >= asked + CLIENTS, 30_000, () => `the model was asked for ${system.llm.requests.length - asked} of ${CLIENTS} answers`);
      await system.llm.idle();
    } finally {
      clearInterval(sampler);
    }
    // A let-go client's run is cancelled: nobody else can read its answer.
    for (const { runId } of stalled) {
      const text = await (await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY } })).text();
      const done = text.split('\n\n').map((block) => /^data: (.*)$/m.exec(block)?.[1]).filter((data) => data?.includes('"event_type":"done"'));
      expect({ runId, done: done.map((data) => JSON.parse(data!) as EventDict) }).toEqual({ runId, done: [expect.objectContaining({ cancelled: true })] });
    }
    // What the stalled clients get when they read again: a prefix of their answer, never its end, then the close.
    const got = await Promise.all(stalled.map(({ socket }) => drain(socket)));
    for (const bytes of got) {
      expect(bytes.toString('utf8')).not.toContain('data: [DONE]');
      expect(bytes.length).toBeLessThan(EVENTS * ANSWER_PAD);
    }
    const grewMb = (peakKb - baselineKb) / 1024;
    process.stdout.write(`[slow consumers] ${CLIENTS} stalled chat-completions streams of ~20 MB answers: gateway RSS +${grewMb.toFixed(1)} MB while the model streamed; they got ${got.map((b) => Math.round(b.length / 1024)).join('/')} KiB (socket buffers included) before the close\n`);
    expect(grewMb).toBeLessThan(35);
    expect((await api(system.url, 'GET', '/health')).status).toBe(200);
  }, 240_000);
});
