import type { EventDict } from './execution-event.js';
import { eventJson, eventsJson, rememberEventJson } from './event-json.js';

const event = (seq: number): EventDict => ({ event_type: 'text', timestamp: 't', session_id: 's', run_id: 'r', seq, content: `c${seq}`, is_final: false });

describe('event JSON', () => {
  it('writes an event in the text it was published as, and encodes one it never saw', () => {
    const published = event(1);
    const asPublished = '{"seq":1,"event_type":"text","timestamp":"t","session_id":"s","run_id":"r","content":"c1","is_final":false}';
    rememberEventJson(published, asPublished);
    expect(eventJson(published)).toBe(asPublished);
    expect(eventJson(event(2))).toBe(JSON.stringify(event(2)));
    // Either way the array parses back to the same events.
    const text = eventsJson([published, event(2)]);
    expect(text.startsWith(`[${asPublished},`)).toBe(true);
    expect(JSON.parse(text)).toEqual([event(1), event(2)]);
  });

  it('keeps nothing for an event that is a copy of a remembered one', () => {
    const original = event(3);
    rememberEventJson(original, '{"seq":3}');
    expect(eventJson({ ...original })).toBe(JSON.stringify(original));
  });
});
