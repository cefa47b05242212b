import type { EventDict } from './execution-event.js';

/** The JSON text each event was published as, while the event object lives. */
const published = new WeakMap<EventDict, string>();

/**
 * Remembers the JSON text an event went out as (the run log's copy), so that writing the same
 * event again (the archive) costs no second encoding.
 * @param json the event as JSON, `seq` included: what a reader of the log parses back into `event`.
 */
export function rememberEventJson(event: EventDict, json: string): void {
  published.set(event, json);
}

/** The event as JSON: the text it was published as when that is known, else encoded now. */
export function eventJson(event: EventDict): string {
  return published.get(event) ?? JSON.stringify(event);
}

/** Events as a JSON array, each in the text it was published as where known. */
export function eventsJson(events: readonly EventDict[]): string {
  return `[${events.map(eventJson).join(',')}]`;
}
