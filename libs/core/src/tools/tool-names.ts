import { createHash } from 'node:crypto';

/** Function names OpenAI-compatible APIs accept. */
const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The name a tool goes by on the wire of an OpenAI-compatible API, which allows no dots:
 * `server.tool` becomes `server__tool`, other characters become `_`, and a name longer than 64
 * is cut and given a hash of the whole, so two tools never share one. A name that is already
 * safe is left as it is.
 */
export function wireToolName(name: string): string {
  if (WIRE_NAME.test(name)) return name;
  const safe = name.replace(/\./g, '__').replace(/[^a-zA-Z0-9_-]/g, '_');
  if (safe.length <= 64 && safe !== name) return safe;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${safe.slice(0, 64 - hash.length - 1)}_${hash}`;
}
