import type { EventDict } from '#core/events/execution-event.js';
import { ExchangeError } from './chat-transport.js';
import { RunEvents } from './run-events.js';

const event = (run_id: string, event_type: string, seq: number, fields: Record<string, unknown> = {}): EventDict =>
  ({ event_type, timestamp: '2026-01-01T00:00:00.000Z', session_id: `s-${run_id}`, run_id, seq, ...fields }) as EventDict;

describe('RunEvents', () => {
  it('keeps events that arrive before the acknowledgement, and only those of its run', () => {
    const run = new RunEvents(0);
    run.add(event('old', 'done', 9, { cancelled: true }));
    run.add(event('r1', 'run_queued', 1));
    run.add(event('r1', 'text', 2, { content: '' }));
    run.add(event('r1', 'text', 3, { content: 'Hi' }));
    expect(run.exchange()).toBeUndefined();
    expect(run.acknowledge({ ok: true, session_id: 's-r1', run_id: 'r1' })).toBeUndefined();
    expect(run.exchange()).toBeUndefined();
    run.add(event('r1', 'done', 4, { cancelled: false }));
    const exchange = run.exchange()!;
    expect(exchange.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(exchange).toMatchObject({ sessionId: 's-r1', runId: 'r1' });
    expect(exchange.ttftMs).toBeGreaterThanOrEqual(0);
  });

  it('has no first token without text', () => {
    const run = new RunEvents(0);
    run.acknowledge({ ok: true, session_id: 's', run_id: 'r' });
    run.add(event('r', 'done', 1, { cancelled: false }));
    expect(run.exchange()!.ttftMs).toBeNull();
  });

  it('turns a refusal into an error with the code and the reason the error event gave', () => {
    const run = new RunEvents(0);
    run.add(event('', 'error', 0, { error_code: 'session_limit', error: 'Too many sessions' }));
    const refused = run.acknowledge({ ok: false, error_code: 'session_limit' });
    expect(refused).toBeInstanceOf(ExchangeError);
    expect(refused).toMatchObject({ code: 'session_limit', message: 'refused: session_limit: Too many sessions' });
  });
});
