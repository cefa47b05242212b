import type { EventDict, ExecutionEvent } from '#core/events/execution-event.js';
import type { ElicitationAnswer } from '#core/hitl/elicitation.js';
import type { ElicitationQuestion } from './elicitor.js';
import { LocalElicitation } from './local-elicitation.js';

const prompt = {
  server: 'booking',
  mode: 'form' as const,
  message: 'Who comes?',
  requestedSchema: { type: 'object', properties: { name: { type: 'string' }, guests: { type: 'integer', default: 2 } }, required: ['name'] },
};

function call() {
  const events: EventDict[] = [];
  const envelope = { sessionId: 's', runId: 'r' };
  return { events, call: { runId: 'r', sessionId: 's', toolCallId: 'c1', emit: (build: (e: typeof envelope) => ExecutionEvent) => void events.push(build(envelope).toDict()) } };
}

describe('LocalElicitation', () => {
  it('fills the defaults of an accepted form, and asks again, by field, when it does not fit', async () => {
    const asked: ElicitationQuestion[] = [];
    const replies: ElicitationAnswer[] = [{ action: 'accept', content: { guests: 'two' } }, { action: 'accept', content: { name: 'Ada' } }];
    const handler = new LocalElicitation(async (question) => (asked.push(question), replies.shift()!), 60_000);
    const { events, call: c } = call();
    expect(await handler.ask(prompt, c, new AbortController().signal)).toEqual({ action: 'accept', content: { name: 'Ada', guests: 2 } });
    expect(asked[1]!.problems).toEqual({ name: ['is required'], guests: ['must be integer'] });
    expect(events.map((e) => e.event_type)).toEqual(['elicitation_request', 'elicitation']);
    expect(events[1]).toMatchObject({ action: 'accept', content: { name: 'Ada', guests: 2 } });
  });

  it('counts no answer in time as cancel, and says so', async () => {
    const handler = new LocalElicitation((_question, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ action: 'cancel' }))), 50);
    const { events, call: c } = call();
    expect(await handler.ask(prompt, c, new AbortController().signal)).toEqual({ action: 'cancel' });
    expect(events[1]).toMatchObject({ action: 'cancel', reason: 'expired' });
  });

  it('passes a decline on as it is', async () => {
    const handler = new LocalElicitation(async () => ({ action: 'decline' }), 60_000);
    const { events, call: c } = call();
    expect(await handler.ask(prompt, c, new AbortController().signal)).toEqual({ action: 'decline' });
    expect(events[1]).toEqual(expect.objectContaining({ action: 'decline' }));
    expect(events[1]).not.toHaveProperty('reason');
  });
});
