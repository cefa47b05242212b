import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Application, NextFunction, Request, Response } from 'express';
import { repositoryRoot } from '../infra/repository-root.js';

/** The demo UI's files: plain ES modules and CSS, served as they are (no build step). */
export const WEB_DIR = join(repositoryRoot(), 'apps/gateway/web');

/** Browser libraries served from node_modules under /ui/vendor/ (the page loads nothing from elsewhere): package and ES module file. */
const VENDOR: Record<string, [string, string]> = {
  // Preact, its hooks and htm in one ES module: no bare imports for the browser to resolve.
  'preact.js': ['htm', 'preact/standalone.mjs'],
  'marked.js': ['marked', 'lib/marked.esm.js'],
  'purify.js': ['dompurify', 'dist/purify.es.mjs'],
};

/** Files of WEB_DIR a browser may fetch: the UI's own modules, styles and icons, not its specs or type declarations. */
const ASSET = /^[a-z0-9-]+\.(?:js|css|svg)$/;

/**
 * Scripts only from the gateway (no inline script, no eval); model output rendered as HTML can
 * therefore run nothing even if the sanitiser missed something. Images from the gateway or
 * data: URLs (MCP image results); sockets and fetches to the gateway only.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function uiHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Revalidated on every load (ETag), so a new gateway version is never mixed with old modules.
  res.setHeader('Cache-Control', 'no-cache');
}

/** A library's ES module in node_modules (beside dist/, in the checkout and the image). */
function vendorFile(pkg: string, path: string): string {
  const file = join(repositoryRoot(), 'node_modules', pkg, path);
  if (!existsSync(file)) throw new Error(`the web UI needs ${pkg} (${path} is missing): run npm install`);
  return file;
}

/**
 * Serves the web UI: `/` is its page, `/ui/*` its modules, `/ui/vendor/*` the libraries it uses.
 * Registered before Nest's routes; anything else falls through to the API's JSON 404.
 * @throws Error when a vendor library is not installed (the gateway then does not start).
 */
export function serveWebUi(app: NestExpressApplication): void {
  const vendor = new Map(Object.entries(VENDOR).map(([file, [pkg, path]]) => [file, vendorFile(pkg, path)]));
  const http = app.getHttpAdapter().getInstance() as Application;
  const send = (res: Response, next: NextFunction, path: string) => {
    uiHeaders(res);
    res.sendFile(path, (err?: Error & { code?: string }) => {
      if (err && !res.headersSent) next(err.code === 'ENOENT' ? undefined : err);
    });
  };
  http.get('/', (_req: Request, res: Response, next: NextFunction) => send(res, next, `${WEB_DIR}/index.html`));
  http.get('/ui/vendor/:file', (req: Request, res: Response, next: NextFunction) => {
    const path = vendor.get(String(req.params.file));
    if (path) send(res, next, path);
    else next();
  });
  http.get('/ui/:file', (req: Request, res: Response, next: NextFunction) => {
    const file = String(req.params.file);
    if (ASSET.test(file)) send(res, next, `${WEB_DIR}/${file}`);
    else next();
  });
}
