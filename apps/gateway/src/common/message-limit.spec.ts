import { holdMessagesToLimit, messageBytes } from './message-limit.js';

const outcome = (f: () => void) => {
  try {
    f();
    return 'ok';
  } catch (err) {
    const e = err as { status: number; errorCode: string; details: Record<string, unknown> };
    return `${e.status} ${e.errorCode} ${String(e.details.field)}`;
  }
};

describe('messageBytes', () => {
  it("counts the UTF-8 text of a message however its dialect nests it", () => {
    expect(messageBytes({ role: 'user', content: 'héllo' })).toBe(4 + 6);
    expect(messageBytes({ id: 'm', role: 'user', parts: [{ type: 'text', text: 'ab' }, { type: 'text', text: 'cd' }] })).toBe(1 + 4 + 4 + 4 + 4);
    expect(messageBytes({ parts: [{ data: { deep: ['x'.repeat(10)] } }] })).toBe(10);
    expect(messageBytes(42)).toBe(0);
  });
});

describe('holdMessagesToLimit', () => {
  it('refuses a history whose earlier message is over the limit, naming it', () => {
    const history = [{ role: 'user', content: 'x'.repeat(2_000) }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hi' }];
    expect(outcome(() => holdMessagesToLimit(history, 'messages', 1_024))).toBe('413 message_too_large messages[0]');
    expect(outcome(() => holdMessagesToLimit(history, 'messages', 4_096))).toBe('ok');
  });

  it('holds one message (a string input, instructions) the same way', () => {
    expect(outcome(() => holdMessagesToLimit('x'.repeat(2_000), 'input', 1_024))).toBe('413 message_too_large input');
    expect(outcome(() => holdMessagesToLimit(undefined, 'input', 1_024))).toBe('ok');
  });
});
