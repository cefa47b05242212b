import type { EventDictOf } from '#core/events/execution-event.js';
import { SessionUsage } from './session-usage.js';

const usage = (fields: Partial<EventDictOf<'usage'>>): EventDictOf<'usage'> => ({
  event_type: 'usage',
  session_id: 's',
  run_id: 'r',
  seq: 1,
  timestamp: '',
  model: 'openai:gpt-4o',
  call: 1,
  input_tokens: 0,
  output_tokens: 0,
  cached_input_tokens: 0,
  cost: '0.000000000000',
  currency: 'USD',
  ...fields,
});

describe("the CLI session's usage", () => {
  it('sums the calls it saw, exactly, and says which were estimated', () => {
    const tally = new SessionUsage();
    expect(tally.describe()).toBe('this session: no model calls yet');
    tally.add(usage({ input_tokens: 1200, output_tokens: 30, cost: '0.003300000000' }));
    tally.add(usage({ input_tokens: 800, output_tokens: 4, cost: '0.002040000000', estimated: true }));
    tally.add({ event_type: 'done', session_id: 's', run_id: 'r', seq: 9, timestamp: '', cancelled: false });
    expect(tally.describe()).toBe('this session: 2 model calls, 2,034 tokens (2,000 in, 34 out), 0.0053 USD; 1 estimated (the provider reported nothing)');
    tally.reset();
    tally.add(usage({ input_tokens: 5, output_tokens: 5, priced: false }));
    expect(tally.describe()).toBe('this session: 1 model call, 10 tokens (5 in, 5 out)');
  });
});
