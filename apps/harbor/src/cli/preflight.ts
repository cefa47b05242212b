import { fetch, type Agent } from 'undici';
import { authHeaders, causeOf, type ServerTarget } from '../runs/chat-transport.js';
import { HarborUsageError } from './harbor-errors.js';

const PREFLIGHT_TIMEOUT_MS = 10_000;

export interface ServerCheck {
  /** The gateway's version (`GET /health`). */
  version?: string;
  /** Set when `GET /health` says degraded: the run goes ahead, but expect errors. */
  degraded?: string;
  /** Who the key is: `tenant/user`. */
  caller?: string;
}

/**
 * Checks, before any question, that `target` is a DataAgent gateway that takes the key, so a
 * typo fails in a second with a clear message instead of as N errors in a report.
 *
 * @throws HarborUsageError when the server cannot be reached, is no gateway, or refuses the key.
 */
export async function checkServer(target: ServerTarget, agent: Agent): Promise<ServerCheck> {
  const get = async (path: string, headers: Record<string, string> = {}) => {
    try {
      const res = await fetch(`${target.baseUrl}/api/v1${path}`, { headers, dispatcher: agent, signal: AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS) });
      const text = await res.text();
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      return { status: res.status, body };
    } catch (err) {
      throw new HarborUsageError(`cannot reach the DataAgent server at ${target.baseUrl}: ${causeOf(err)}`);
    }
  };

  const health = await get('/health');
  if (!health.body || (health.status !== 200 && health.status !== 503)) {
    throw new HarborUsageError(`${target.baseUrl} does not look like a DataAgent gateway: GET /api/v1/health answered ${health.status}`);
  }
  const check: ServerCheck = typeof health.body.version === 'string' ? { version: health.body.version } : {};
  if (health.status === 503) {
    const down = ['redis', 'database'].filter((part) => health.body![part] !== 'up');
    check.degraded = `the server reports ${String(health.body.status ?? 'degraded')}${down.length ? ` (${down.join(' and ')} down)` : ''}`;
  }

  const me = await get('/me', authHeaders(target));
  if (me.status === 401) {
    const code = String(me.body?.error_code ?? 'unauthorized');
    throw new HarborUsageError(
      code === 'missing_api_key'
        ? `the server at ${target.baseUrl} needs an API key: pass --api-key or set HARBOR_API_KEY`
        : `the server at ${target.baseUrl} refused the API key (${code})`,
    );
  }
  if (me.status === 200 && me.body) check.caller = `${String(me.body.tenant_id)}/${String(me.body.user_id)}`;
  return check;
}
