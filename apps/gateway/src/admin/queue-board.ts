import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { isAdmin, type Caller } from '#core/auth/caller.js';
import { RunQueue } from '#transport/run-queue.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { requestApiKey } from '../auth/api-key.guard.js';
import { ApiError } from '../common/api-error.js';
import { toApiError } from '../common/api-exception.filter.js';

export const QUEUE_BOARD_PATH = '/admin/queues';

/** The board's page links Google's web fonts; it is served without them (system fonts instead). */
const WEB_FONTS = /<link href="https:\/\/fonts\.googleapis\.com\/[^"]*" rel="stylesheet">/;

/** Its scripts and styles come from @bull-board/ui in node_modules; its page has inline styles. Nothing loads from elsewhere. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves Bull Board, the run queue's dashboard, at /admin/queues (DATAAGENT_BULL_BOARD=true).
 *
 * A browser cannot send X-API-Key when it navigates, so the board also takes the key as the
 * password of HTTP basic auth (any user name): the browser asks once and sends it with every
 * request under this path; no key lands in a URL or a cookie. Jobs carry every tenant's
 * messages, so in multi-tenant mode only operators see the board; otherwise admins do. The
 * board is read-only: removing or retrying a run's job behind its back would leave the run
 * without its done.
 */
export function serveQueueBoard(app: NestExpressApplication, multiTenant: boolean): void {
  const board = new ExpressAdapter();
  board.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(app.get(RunQueue).queue, { readOnlyMode: true })],
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'DataAgent runs' } },
  });
  const keys = app.get(ApiKeyService);
  const allowed = (caller: Caller) => (multiTenant ? caller.role === 'operator' : isAdmin(caller));
  app.use(QUEUE_BOARD_PATH, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const caller = await keys.resolve(basicAuthPassword(req) ?? requestApiKey(req));
      if (!allowed(caller)) {
        throw multiTenant
          ? new ApiError(403, 'operator_required', 'The queue board shows every tenant: operators only')
          : new ApiError(403, 'admin_required', 'Only an admin may see the queue board');
      }
    } catch (err) {
      const error = toApiError(err);
      // The browser's sign-in prompt: the API key as the password.
      if (error.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="DataAgent queue board: your API key as the password", charset="UTF-8"');
      res.status(error.status).json(error.toBody());
      return;
    }
    res.setHeader('Content-Security-Policy', CSP);
    if (req.method === 'GET' && !req.path.startsWith('/api/') && !req.path.startsWith('/static/')) withoutWebFonts(res);
    next();
  });
  app.use(QUEUE_BOARD_PATH, board.getRouter());
}

/** Drops the web fonts' link from the page the board renders. */
function withoutWebFonts(res: Response): void {
  const send = res.send.bind(res);
  res.send = (body?: unknown) => send(typeof body === 'string' ? body.replace(WEB_FONTS, '') : body);
}

/** The password of `Authorization: Basic base64(user:password)`; undefined for any other header. */
function basicAuthPassword(req: Request): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.header('authorization') ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : undefined;
}
