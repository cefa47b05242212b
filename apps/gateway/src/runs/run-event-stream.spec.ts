import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import type { EventDict } from '#core/events/execution-event.js';
import { pipeRunEvents, type FollowPacing, type StreamStep } from './run-event-stream.js';

/** Just enough of an express Response to stream into: what was written, and whether it ended. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  ended = false;
  headers: Record<string, unknown> = {};
  headersSent = false;
  statusCode = 200;
  writableLength = 0;
  status(code: number) {
    // As express: a status set once the headers went out changes nothing.
    if (!this.headersSent) this.statusCode = code;
    return this;
  }
  set(headers: Record<string, unknown>) {
    Object.assign(this.headers, headers);
    return this;
  }
  setHeader(name: string, value: unknown) {
    this.headers[name] = value;
  }
  flushHeaders() {
    this.headersSent = true;
  }
  write(frame: string) {
    this.headersSent = true;
    this.written.push(frame);
    return true;
  }
  end() {
    this.ended = true;
  }
  destroyed = false;
  destroy() {
    this.destroyed = true;
  }
}

const event = (seq: number, event_type = 'text'): EventDict => ({ event_type, seq, run_id: 'r', session_id: 's', timestamp: '' }) as unknown as EventDict;

/** A run whose events the test pushes; `stopped` says whether the stream stopped following it. */
function fakeRun() {
  const run = { listener: (_e: EventDict, _live = true) => undefined as void, onEnded: () => undefined as void, ready: undefined as (() => Promise<void>) | undefined, stopped: false };
  const follow = async (listener: (e: EventDict, live: boolean) => void, pacing: FollowPacing) => {
    run.listener = (e, live = true) => listener(e, live);
    run.onEnded = pacing.onEnded;
    run.ready = pacing.ready;
    return () => {
      run.stopped = true;
    };
  };
  return { run, follow };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('pipeRunEvents', () => {
  it('writes the opening, then each step in log order even when one awaits', async () => {
    const res = new FakeResponse();
    const { run, follow } = fakeRun();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await pipeRunEvents(res as unknown as Response, {
      headers: { 'x-extra': '1' },
      opening: ['open'],
      limit: 1_000,
      follow,
      step: (e): StreamStep | Promise<StreamStep> => (e.seq === 2 ? gate.then(() => ({ frames: ['2'] })) : { frames: [String(e.seq)], ends: e.event_type === 'done' }),
    });
    expect(res.headers).toMatchObject({ 'Content-Type': 'text/event-stream; charset=utf-8', 'x-extra': '1' });
    run.listener(event(1));
    run.listener(event(2));
    run.listener(event(3));
    await flush();
    expect(res.written).toEqual(['open', '1']);
    release();
    await flush();
    expect(res.written).toEqual(['open', '1', '2', '3']);
    run.listener(event(4, 'done'));
    expect(res.written.at(-1)).toBe('4');
    expect(res.ended).toBe(true);
    expect(run.stopped).toBe(true);
    run.listener(event(5));
    expect(res.written.at(-1)).toBe('4');
  });

  it('lets a client that fell behind go, and a client that left ends the stream, not more', async () => {
    const behind = new FakeResponse();
    const slow = fakeRun();
    await pipeRunEvents(behind as unknown as Response, { limit: 10, follow: slow.follow, step: () => ({ frames: ['x'] }) });
    slow.run.listener(event(1));
    expect(behind.ended).toBe(false);
    behind.writableLength = 11;
    slow.run.listener(event(2));
    expect(behind.ended).toBe(true);
    expect(slow.run.stopped).toBe(true);

    const leaving = new FakeResponse();
    const left = fakeRun();
    await pipeRunEvents(leaving as unknown as Response, { limit: 10, follow: left.follow, step: () => ({ frames: ['x'] }) });
    leaving.emit('close');
    expect(left.run.stopped).toBe(true);
  });

  it('tells the dialect once when its client leaves or is let go, never when the stream ends', async () => {
    const outcomes: string[] = [];
    for (const how of ['let go', 'left', 'ended'] as const) {
      const res = new FakeResponse();
      const { follow, run } = fakeRun();
      await pipeRunEvents(res as unknown as Response, { limit: 10, follow, step: (e) => ({ frames: ['x'], ends: e.event_type === 'done' }), onLeave: () => outcomes.push(how) });
      if (how === 'let go') res.writableLength = 11;
      run.listener(event(1, how === 'ended' ? 'done' : 'text'));
      if (how === 'left') res.emit('close');
      res.emit('close');
    }
    expect(outcomes).toEqual(['let go', 'left']);
  });

  it("ends after the steps still pending when the run's stream ends; an opening-only stream follows nothing", async () => {
    const res = new FakeResponse();
    const { run, follow } = fakeRun();
    await pipeRunEvents(res as unknown as Response, { limit: 1_000, follow, step: () => flush().then(() => ({ frames: ['late'] })) });
    run.listener(event(1));
    run.onEnded();
    expect(res.ended).toBe(false);
    await flush();
    await flush();
    expect(res.written).toEqual(['late']);
    expect(res.ended).toBe(true);

    const snapshot = new FakeResponse();
    const none = fakeRun();
    let followed = false;
    await pipeRunEvents(snapshot as unknown as Response, { opening: ['task'], openingOnly: true, limit: 1_000, follow: (...args) => ((followed = true), none.follow(...args)), step: () => ({ frames: [] }) });
    expect({ written: snapshot.written, ended: snapshot.ended, followed }).toEqual({ written: ['task'], ended: true, followed: false });
  });

  it('the native stream: headers wait for the first frame (204 when the run had ended), a replay is paced, and a slow client gets its frames before it goes', async () => {
    // The run had ended at the cursor: the follow says so before it returns.
    const ended = new FakeResponse();
    const endedAtCursor = async (_listener: unknown, pacing: FollowPacing) => {
      pacing.onEnded();
      return () => undefined;
    };
    await pipeRunEvents(ended as unknown as Response, { limit: 10, follow: endedAtCursor, step: () => ({ frames: ['x'] }), noContentWhenEnded: true, pacedReplay: true });
    await flush();
    expect({ status: ended.statusCode, ended: ended.ended, written: ended.written }).toEqual({ status: 204, ended: true, written: [] });

    const res = new FakeResponse();
    const { run, follow } = fakeRun();
    const opened: string[] = [];
    await pipeRunEvents(res as unknown as Response, {
      limit: 10,
      follow,
      step: (e) => ({ frames: [`e${e.seq}`] }),
      noContentWhenEnded: true,
      pacedReplay: true,
      slowFrames: () => ['slow_consumer'],
      onOpen: () => opened.push('open'),
      onClose: () => opened.push('close'),
    });
    expect(run.ready).toBeDefined();
    res.writableLength = 11;
    run.listener(event(1), false);
    expect(res.ended).toBe(false);
    run.listener(event(2), true);
    expect(res.written).toEqual(['e1', 'e2', 'slow_consumer']);
    expect(res.ended).toBe(true);
    expect(opened).toEqual(['open', 'close']);
  });

  it('a follow that fails: thrown before the headers went out, framed after', async () => {
    const before = new FakeResponse();
    const failing = async () => {
      throw new Error('redis down');
    };
    await expect(pipeRunEvents(before as unknown as Response, { limit: 10, follow: failing, step: () => ({ frames: [] }), noContentWhenEnded: true, failedFrames: () => ['failed'] })).rejects.toThrow('redis down');
    expect(before.written).toEqual([]);

    const after = new FakeResponse();
    await pipeRunEvents(after as unknown as Response, { limit: 10, follow: failing, step: () => ({ frames: [] }), failedFrames: () => ['failed'] });
    expect({ written: after.written, ended: after.ended }).toEqual({ written: ['failed'], ended: true });
  });
});
