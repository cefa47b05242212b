import { request as httpRequest } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { redisKeys } from '#transport/redis-keys.js';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP request with headers fetch forbids (Host, Origin), to the gateway's loopback port. */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: Number(url.port), method, path, headers, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw TCP connection that sends a WebSocket upgrade request and waits for the answer's head. */
export async function rawUpgrade(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<{ socket: Socket; head: string; status: number }> {
  const socket = tcpConnect(Number(new URL(baseUrl).port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
  const head = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no answer to the upgrade; got ${JSON.stringify(text)}`)), 10_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      clearTimeout(timer);
      socket.off('data', onData);
      const rest = Buffer.from(text.slice(end + 4), 'latin1');
      if (rest.length > 0) socket.unshift(rest);
      resolve(text.slice(0, end + 4));
    };
    socket.on('data', onData);
  });
  return { socket, head, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0) };
}

/** Resolves when the server closes `socket` (end or reset); rejects after `timeoutMs`. */
export function closedByServer(socket: Socket, timeoutMs = 10_000): Promise<Buffer> {
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  return new Promise((resolve, reject) => {
    if (socket.destroyed || socket.readableEnded) return resolve(Buffer.concat(received));
    const timer = setTimeout(() => reject(new Error('the server kept the socket open')), timeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(received));
    });
  });
}

/** A masked client frame: FIN + opcode, payload masked with a fixed key (RFC 6455 5.3). */
export function clientFrame(opcode: number, payload: Buffer | string, options: { fin?: boolean; rsv?: number; mask?: boolean } = {}): Buffer {
  const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const first = ((options.fin ?? true) ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode;
  const mask = options.mask ?? true;
  const len = data.length;
  const header = len < 126 ? Buffer.from([first, (mask ? 0x80 : 0) | len]) : len < 65536 ? Buffer.from([first, (mask ? 0x80 : 0) | 126, len >> 8, len & 0xff]) : (() => {
    const b = Buffer.alloc(10);
    b[0] = first;
    b[1] = (mask ? 0x80 : 0) | 127;
    b.writeBigUInt64BE(BigInt(len), 2);
    return b;
  })();
  if (!mask) return Buffer.concat([header, data]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(data.map((byte, i) => byte ^ key[i % 4]));
  return Buffer.concat([header, key, masked]);
}

/** How many subscribers (gateway relays) listen to a run's event channel right now. */
export async function runSubscribers(runId: string): Promise<number> {
  const redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const [, count] = (await redis.pubsub('NUMSUB', redisKeys.runChannel(runId))) as [string, number];
    return Number(count);
  } finally {
    redis.disconnect();
  }
}

export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

/** Splits what a server sent on a WebSocket into frames (server frames are unmasked); a cut last frame is left out. */
export function parseServerFrames(bytes: Buffer): ServerFrame[] {
  const frames: ServerFrame[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at] & 0x0f;
    let length = bytes[at + 1] & 0x7f;
    let offset = at + 2;
    if (length === 126) {
      if (offset + 2 > bytes.length) break;
      length = bytes.readUInt16BE(offset);
      offset += 2;
    } else if (length === 127) {
      if (offset + 8 > bytes.length) break;
      length = Number(bytes.readBigUInt64BE(offset));
      offset += 8;
    }
    if (offset + length > bytes.length) break;
    frames.push({ opcode, payload: bytes.subarray(offset, offset + length) });
    at = offset + length;
  }
  return frames;
}
