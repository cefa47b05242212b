/**
 * Wire-level clients for the fuzz and slow-consumer suites: raw HTTP/1.1 over a TCP socket (any
 * bytes, duplicate or oversized headers), WebSocket frames built and read by hand, Server-Sent
 * Events parsing, and what /proc tells about a process and its TCP connections. Every helper
 * has a deadline and closes what it opens.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface RawRequest {
  method: string;
  /** The request-target exactly as sent (path and query). */
  target: string;
  /** Header lines in order; duplicates allowed. Values are written as UTF-8. */
  headers?: Array<[string, string]>;
  body?: Buffer | string;
  /** Host header value; null omits it. Default `127.0.0.1:<port>`. */
  host?: string | null;
  /** Adds `Content-Length` for the body unless a header sets it or `Transfer-Encoding`. Default true. */
  autoLength?: boolean;
}

export interface RawResponse {
  /** 0 when no status line arrived. */
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
  /** The body was framed (length, chunked or close) and arrived whole. */
  complete: boolean;
  timedOut: boolean;
  /** A socket error (ECONNRESET, ECONNREFUSED, EPIPE) before the response was whole. */
  error?: string;
  /** Milliseconds from connect to the end. */
  ms: number;
}

/** First value of a response header (lower-case name). */
export function header(res: RawResponse, name: string): string | undefined {
  return res.headers[name]?.[0];
}

/**
 * Sends one HTTP/1.1 request on a fresh TCP connection and reads the answer.
 * `text/event-stream` answers are read until the server ends them or `streamMs` passes
 * (then `complete` is false and `timedOut` true).
 */
export function rawHttp(port: number, request: RawRequest, options: { timeoutMs: number; streamMs?: number; hostname?: string }): Promise<RawResponse> {
  const started = Date.now();
  const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  if (request.host !== null) lines.push(`Host: ${request.host ?? `127.0.0.1:${port}`}`);
  const given = new Set((request.headers ?? []).map(([n]) => n.toLowerCase()));
  for (const [name, value] of request.headers ?? []) lines.push(`${name}: ${value}`);
  if (!given.has('connection')) lines.push('Connection: close');
  if (body && request.autoLength !== false && !given.has('content-length') && !given.has('transfer-encoding')) lines.push(`Content-Length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8');

  return new Promise((resolve) => {
    const socket = connect(port, options.hostname ?? '127.0.0.1');
    socket.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let parsed: { status: number; headers: Record<string, string[]>; bodyStart: number } | null = null;
    let finished = false;
    const finish = (extra: Partial<RawResponse>) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(streamTimer);
      socket.destroy();
      const res: RawResponse = { status: parsed?.status ?? 0, headers: parsed?.headers ?? {}, body: Buffer.alloc(0), complete: false, timedOut: false, ms: Date.now() - started, ...extra };
      if (parsed && !extra.body) res.body = buf.subarray(parsed.bodyStart);
      resolve(res);
    };
    const timer = setTimeout(() => finish({ timedOut: true }), options.timeoutMs);
    let streamTimer: NodeJS.Timeout | undefined;

    const tryParse = () => {
      while (!parsed) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = buf.subarray(0, end).toString('latin1');
        const [statusLine, ...headerLines] = headText.split('\r\n');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
        const headers: Record<string, string[]> = {};
        for (const line of headerLines) {
          const i = line.indexOf(':');
          if (i <= 0) continue;
          const name = line.slice(0, i).trim().toLowerCase();
          (headers[name] ??= []).push(line.slice(i + 1).trim());
        }
        if (status >= 100 && status < 200 && status !== 101) {
          buf = buf.subarray(end + 4); // interim answer (100 Continue): the real one follows
          continue;
        }
        parsed = { status, headers, bodyStart: end + 4 };
        const type = headers['content-type']?.[0] ?? '';
        if (/text\/event-stream/i.test(type) && options.streamMs !== undefined) {
          streamTimer = setTimeout(() => finish({ timedOut: true }), options.streamMs);
        }
      }
      const b = buf.subarray(parsed.bodyStart);
      const length = parsed.headers['content-length']?.[0];
      const chunked = /chunked/i.test(parsed.headers['transfer-encoding']?.join(',') ?? '');
      if (request.method === 'HEAD' || parsed.status === 204 || parsed.status === 304 || parsed.status === 101) return finish({ complete: true, body: Buffer.alloc(0) });
      if (chunked) {
        const decoded = decodeChunked(b);
        if (decoded) finish({ complete: true, body: decoded });
      } else if (length !== undefined && /^\d+$/.test(length)) {
        if (b.length >= Number(length)) finish({ complete: true, body: b.subarray(0, Number(length)) });
      }
    };

    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse();
    });
    socket.on('end', () => {
      tryParse();
      // Without length or chunking the body runs to the close.
      if (parsed && !parsed.headers['content-length'] && !parsed.headers['transfer-encoding']) finish({ complete: true });
      else finish({ error: parsed ? 'closed before the body was whole' : 'closed without a response' });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      tryParse();
      finish({ error: err.code ?? err.message });
    });
    socket.on('connect', () => {
      socket.write(head);
      if (body) socket.write(body);
    });
  });
}

/** The body of a chunked answer once its last chunk arrived; null while incomplete. */
function decodeChunked(b: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(b.subarray(at, eol).toString('latin1').split(';')[0], 16);
    if (Number.isNaN(size)) return Buffer.concat(parts);
    if (size === 0) return Buffer.concat(parts);
    if (b.length < eol + 2 + size + 2) return null;
    parts.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

// ---------------------------------------------------------------------------------------------
// WebSocket frames

export interface FrameSpec {
  fin: boolean;
  /** RSV1..3 as three bits (0..7). */
  rsv: number;
  /** 0..15, reserved ones included. */
  opcode: number;
  /** Masking key; null sends the frame unmasked (forbidden for clients). */
  mask: Buffer | null;
  payload: Buffer;
  /** How the length is written: the shortest form, or forced 16- or 64-bit forms. */
  lengthForm?: 'min' | '16' | '64';
  /** A length to declare instead of the payload's (a lie). */
  declaredLength?: bigint;
}

/** Encodes one frame exactly as specified, however wrong. */
export function encodeFrame(f: FrameSpec): Buffer {
  const length = f.declaredLength ?? BigInt(f.payload.length);
  const form = f.lengthForm ?? 'min';
  const parts: Buffer[] = [Buffer.from([(f.fin ? 0x80 : 0) | ((f.rsv & 7) << 4) | (f.opcode & 0x0f)])];
  const maskBit = f.mask ? 0x80 : 0;
  if (form === '64' || (form === 'min' && length > 0xffffn)) {
    const b = Buffer.alloc(9);
    b[0] = maskBit | 127;
    b.writeBigUInt64BE(length & 0xffffffffffffffffn, 1);
    parts.push(b);
  } else if (form === '16' || (form === 'min' && length > 125n)) {
    const b = Buffer.alloc(3);
    b[0] = maskBit | 126;
    b.writeUInt16BE(Number(length & 0xffffn), 1);
    parts.push(b);
  } else {
    parts.push(Buffer.from([maskBit | Number(length & 0x7fn)]));
  }
  if (f.mask) {
    const key = f.mask.subarray(0, 4);
    parts.push(key);
    const masked = Buffer.alloc(f.payload.length);
    for (let i = 0; i < masked.length; i++) masked[i] = f.payload[i] ^ key[i % 4];
    parts.push(masked);
  } else {
    parts.push(f.payload);
  }
  return Buffer.concat(parts);
}

/** A well-formed masked client frame. */
export function clientFrame(opcode: number, payload: Buffer | string, fin = true): Buffer {
  return encodeFrame({ fin, rsv: 0, opcode, mask: Buffer.from([0x12, 0x34, 0x56, 0x78]), payload: Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8') });
}

export interface ServerFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** Reads the complete frames at the start of `buf` (server frames are unmasked); returns them and the rest. */
export function decodeFrames(buf: Buffer): { frames: ServerFrame[]; rest: Buffer } {
  const frames: ServerFrame[] = [];
  let at = 0;
  while (buf.length - at >= 2) {
    const b0 = buf[at];
    const b1 = buf[at + 1];
    let len = b1 & 0x7f;
    let off = at + 2;
    if (len === 126) {
      if (buf.length - off < 2) break;
      len = buf.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (buf.length - off < 8) break;
      const big = buf.readBigUInt64BE(off);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) break;
      len = Number(big);
      off += 8;
    }
    let mask: Buffer | null = null;
    if (b1 & 0x80) {
      if (buf.length - off < 4) break;
      mask = buf.subarray(off, off + 4);
      off += 4;
    }
    if (buf.length - off < len) break;
    let payload = buf.subarray(off, off + len);
    if (mask) payload = Buffer.from(payload.map((x, i) => x ^ mask![i % 4]));
    frames.push({ fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload });
    at = off + len;
  }
  return { frames, rest: buf.subarray(at) };
}

/** Close code and reason of a close frame's payload (code 1005 when it carries none). */
export function closeInfo(frame: ServerFrame): { code: number; reason: string } {
  if (frame.payload.length < 2) return { code: 1005, reason: '' };
  return { code: frame.payload.readUInt16BE(0), reason: frame.payload.subarray(2).toString('utf8') };
}

export interface UpgradeAnswer {
  socket: Socket;
  status: number;
  headers: Record<string, string[]>;
  /** Bytes after the answer's head (WebSocket frames after a 101, or a refusal's body). */
  rest: Buffer;
  error?: string;
}

/**
 * Sends a WebSocket upgrade request and waits for the answer's head. The socket stays open
 * (paused) for the caller, who must destroy it.
 */
export function rawUpgrade(port: number, target: string, headers: Array<[string, string]>, options: { timeoutMs: number; omitDefaults?: boolean; after?: Buffer }): Promise<UpgradeAnswer> {
  const lines = [`GET ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
  if (!options.omitDefaults) {
    lines.push('Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13');
  }
  for (const [n, v] of headers) lines.push(`${n}: ${v}`);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (answer: Omit<UpgradeAnswer, 'socket'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, ...answer });
    };
    const timer = setTimeout(() => finish({ status: 0, headers: {}, rest: buf, error: 'timeout' }), options.timeoutMs);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...headerLines] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const hs: Record<string, string[]> = {};
      for (const line of headerLines) {
        const i = line.indexOf(':');
        if (i > 0) (hs[line.slice(0, i).trim().toLowerCase()] ??= []).push(line.slice(i + 1).trim());
      }
      finish({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers: hs, rest: buf.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', (err: NodeJS.ErrnoException) => finish({ status: 0, headers: {}, rest: buf, error: err.code ?? err.message }));
    socket.on('close', () => finish({ status: 0, headers: {}, rest: buf, error: 'closed' }));
    // `after` goes out in the same write: frames a client sends before it has seen the answer.
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8'), options.after ?? Buffer.alloc(0)])));
  });
}

/** Reads from an upgraded socket until the server closes it or `ms` pass; returns every byte. */
export function drain(socket: Socket, initial: Buffer, ms: number): Promise<{ bytes: Buffer; closed: boolean; error?: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [initial];
    let settled = false;
    const settle = (closed: boolean, error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData);
      resolve({ bytes: Buffer.concat(chunks), closed, error });
    };
    const onData = (d: Buffer) => chunks.push(d);
    const timer = setTimeout(() => settle(false), ms);
    socket.on('data', onData);
    socket.once('close', () => settle(true));
    socket.once('error', (err: NodeJS.ErrnoException) => settle(true, err.code ?? err.message));
    if (socket.destroyed) settle(true);
    socket.resume();
  });
}

// ---------------------------------------------------------------------------------------------
// A minimal WebSocket client over a raw socket (engine.io / Socket.IO by hand, stalled readers)

/**
 * A WebSocket client speaking frames by hand on a raw TCP socket: it can stop reading at any
 * moment (pause) and say exactly what arrived before the server closed.
 */
export class RawWsClient {
  readonly frames: ServerFrame[] = [];
  closedByServer = false;
  private buf: Buffer;
  private readonly waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket, rest: Buffer) {
    this.buf = rest;
    socket.on('data', (d: Buffer) => this.take(d));
    socket.on('close', () => {
      this.closedByServer = true;
      this.wake();
    });
    socket.on('error', () => undefined);
    this.take(Buffer.alloc(0));
    socket.resume();
  }

  /** Upgrades `target` and returns the client, or throws with the refusal's status. */
  static async open(port: number, target: string, headers: Array<[string, string]> = [], timeoutMs = 5_000): Promise<RawWsClient> {
    const answer = await rawUpgrade(port, target, headers, { timeoutMs });
    if (answer.status !== 101) {
      answer.socket.destroy();
      throw new Error(`upgrade of ${target} answered ${answer.status || answer.error}`);
    }
    return new RawWsClient(answer.socket, answer.rest);
  }

  /** Text payloads of the data frames received so far. */
  texts(): string[] {
    return this.frames.filter((f) => f.opcode === 1).map((f) => f.payload.toString('utf8'));
  }

  sendText(text: string): void {
    this.socket.write(clientFrame(1, text));
  }

  sendRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Resolves when a frame matching `match` has arrived (or rejects after `timeoutMs`). */
  async waitFor(match: (f: ServerFrame) => boolean, timeoutMs = 5_000): Promise<ServerFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (this.closedByServer) throw new Error('closed by the server before the frame came');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`frame not seen in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
  }

  /**
   * Ends the client's side and waits until the server has closed its side: it has read every
   * byte sent before, and every frame it sent is in `frames`.
   */
  async finish(timeoutMs = 5_000): Promise<void> {
    this.socket.end();
    await this.waitFor(() => false, timeoutMs).catch((err: Error) => {
      if (!this.closedByServer) throw new Error(`the server kept the connection open after the client ended it: ${err.message}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private take(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const { frames, rest } = decodeFrames(this.buf);
    this.buf = rest;
    for (const f of frames) {
      // engine.io pings need a pong or the server drops us.
      if (f.opcode === 1 && f.payload.toString() === '2') this.socket.write(clientFrame(1, '3'));
      this.frames.push(f);
    }
    if (frames.length) this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

// ---------------------------------------------------------------------------------------------
// Server-Sent Events

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
  comments: string[];
}

/** Complete SSE blocks of a stream; an unfinished last block (no blank line yet) is left out. */
export function parseSse(text: string): SseFrame[] {
  const blocks = text.split(/\r?\n\r?\n/);
  blocks.pop(); // the part after the last blank line is not a complete block
  const frames: SseFrame[] = [];
  for (const block of blocks) {
    if (!block) continue;
    const frame: SseFrame = { data: '', comments: [] };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) {
        frame.comments.push(line.slice(1).trim());
        continue;
      }
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data') data.push(value);
    }
    frame.data = data.join('\n');
    frames.push(frame);
  }
  return frames;
}

// ---------------------------------------------------------------------------------------------
// /proc

/** Resident set size of a process in bytes (VmRSS), or null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export interface TcpEntry {
  localPort: number;
  remotePort: number;
  /** Kernel state: 1 ESTABLISHED, 4 FIN_WAIT1, 5 FIN_WAIT2, 6 TIME_WAIT, 7 CLOSE, 8 CLOSE_WAIT, 9 LAST_ACK, 11 CLOSING. */
  state: number;
  txQueue: number;
  rxQueue: number;
}

/** IPv4 loopback TCP connections of this machine (both ends of each show up). */
export function loopbackTcp(): TcpEntry[] {
  const out: TcpEntry[] = [];
  let text = '';
  try {
    text = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5) continue;
    const [, local, remote, st, queues] = cols;
    const [lAddr, lPort] = local.split(':');
    const [rAddr, rPort] = remote.split(':');
    if (lAddr !== '0100007F' || rAddr !== '0100007F') continue;
    const [tx, rx] = queues.split(':');
    out.push({ localPort: parseInt(lPort, 16), remotePort: parseInt(rPort, 16), state: parseInt(st, 16), txQueue: parseInt(tx, 16), rxQueue: parseInt(rx, 16) });
  }
  return out;
}
