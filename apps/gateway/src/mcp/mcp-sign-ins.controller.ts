import { Controller, Delete, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { AcceptsStreamTicket, CurrentCaller, Public } from '../auth/api-key.guard.js';
import { McpSignIns, type SignInOutcome, type StartedSignIn } from './mcp-sign-ins.service.js';

export class AuthorizeUrlView {
  @ApiProperty({ description: "Opens the sign-in in the person's browser as it is: a single-use ticket stands in for the API key" })
  authorize_url: string;

  @ApiProperty({ type: 'integer', description: 'Seconds the URL may wait before it is opened' })
  expires_in: number;
}

export class SignOutView {
  @ApiProperty()
  server_name: string;

  @ApiProperty({ description: 'A sign-in was stored, and is forgotten now' })
  signed_out: boolean;

  @ApiProperty({ description: "The authorization server's revocation endpoint (RFC 7009) revoked the tokens" })
  revoked: boolean;
}

export class ClientMetadataView {
  @ApiProperty({ description: 'This document\'s own URL' })
  client_id: string;

  @ApiProperty()
  client_name: string;

  @ApiProperty({ type: [String] })
  redirect_uris: string[];

  @ApiProperty({ type: [String] })
  grant_types: string[];

  @ApiProperty({ type: [String] })
  response_types: string[];

  @ApiProperty({ enum: ['none'] })
  token_endpoint_auth_method: string;
}

/**
 * Signing people in to their OAuth-protected MCP servers: the authorize URL, the redirect to
 * the authorization server, its callback, sign-out, and DataAgent's client metadata document.
 */
@Controller()
export class McpSignInsController {
  constructor(private readonly signIns: McpSignIns) {}

  @Post('users/:userId/mcp-servers/:name/authorize')
  @ApiOperation({ summary: "An authorize_url that starts the person's sign-in to their MCP server in a browser" })
  @ApiResponse({ status: 201, type: AuthorizeUrlView })
  authorizeUrl(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string): Promise<AuthorizeUrlView> {
    return this.signIns.authorizeUrl(caller, userId, name);
  }

  @Get('users/:userId/mcp-servers/:name/authorize')
  @AcceptsStreamTicket()
  @ApiOperation({
    summary: "Starts the sign-in (open authorize_url, with its ticket): a page that names the authorization server's host, whose link the person follows there",
    description: 'The browser gets an HttpOnly cookie for this sign-in: the callback completes only in the browser that opened this URL.',
  })
  @ApiResponse({ status: 200, description: 'A small HTML page: where the sign-in continues, and a link there', content: { 'text/html': { schema: { type: 'string' } } } })
  async authorize(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string, @Query('ticket') ticket: unknown, @Res() res: Response): Promise<void> {
    const started = await this.signIns.start(caller, userId, name, typeof ticket === 'string' ? ticket : undefined);
    const { cookie } = started;
    res.cookie(cookie.name, cookie.value, { httpOnly: true, sameSite: 'lax', path: cookie.path, maxAge: cookie.maxAgeMs, secure: cookie.secure });
    // Never a redirect: the gateway does not send a browser to a host a server's metadata names without the person seeing which.
    res.status(200).type('html').set(PAGE_HEADERS).send(continuePage(started));
  }

  @Delete('users/:userId/mcp-servers/:name/authorize')
  @ApiOperation({ summary: 'Signs out of the MCP server: revokes the tokens where the server offers it, and forgets them' })
  @ApiOkResponse({ type: SignOutView })
  signOut(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string): Promise<SignOutView> {
    return this.signIns.signOut(caller, userId, name);
  }

  @Get('mcp/oauth/callback')
  @Public()
  @ApiOperation({ summary: "Where the authorization server sends the browser back: stores the person's tokens and answers a page that returns to the UI" })
  @ApiQuery({ name: 'code', required: false })
  @ApiQuery({ name: 'state', required: true })
  @ApiResponse({ status: 200, description: 'A small HTML page: signed in, or why not', content: { 'text/html': { schema: { type: 'string' } } } })
  async callback(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    const outcome = await this.signIns.finish(query, req.headers.cookie);
    if (outcome.clearCookie) res.clearCookie(outcome.clearCookie.name, { httpOnly: true, sameSite: 'lax', path: outcome.clearCookie.path });
    res.status(outcome.ok ? 200 : 400).type('html').set('cache-control', 'no-store').send(callbackPage(outcome));
  }

  @Get('mcp/oauth/client-metadata.json')
  @Public()
  @ApiOperation({ summary: "DataAgent's OAuth client metadata document: its URL is the client_id where authorization servers take one (https)" })
  @ApiOkResponse({ type: ClientMetadataView })
  clientMetadata(): ClientMetadataView {
    return this.signIns.clientMetadata() as ClientMetadataView;
  }
}

/**
 * The interstitial's headers: no script, no framing (its one link is the whole point, and must
 * not be clicked through a page laid over it), no cache, and no Referer to the authorization
 * server (the URL carried the sign-in's ticket).
 */
const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page between the gateway and the authorization server: which host the person is about to go to, for which server and whom. */
function continuePage(started: StartedSignIn): string {
  const host = started.authorizationUrl.host;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in to ${escape(started.server)} · DataAgent</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}a{color:#0b57d0}code{font-size:1.05em}</style></head>
<body><main><h1>Sign in to ${escape(started.server)}</h1>
<p>DataAgent connects the MCP server <strong>${escape(started.server)}</strong> for <strong>${escape(started.userId)}</strong>. Its sign-in continues at <code id="host">${escape(host)}</code>, the authorization server that MCP server names: sign in there only if you trust it.</p>
<p>If you did not start this sign-in, close this page.</p>
<p><a id="continue" href="${escape(started.authorizationUrl.toString())}" rel="noreferrer">Continue to ${escape(host)}</a></p></main>
</body></html>`;
}

/** The page the browser lands on: what happened, and the way back to the web UI's MCP tab. */
function callbackPage(outcome: SignInOutcome): string {
  const title = outcome.ok ? `Signed in${outcome.server ? ` to ${outcome.server}` : ''}` : 'Sign-in did not complete';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)} · DataAgent</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}a{color:#0b57d0}</style></head>
<body><main><h1>${escape(title)}</h1><p id="outcome" data-ok="${outcome.ok}">${escape(outcome.message)}</p>
<p><a href="/#mcp">Back to DataAgent</a></p></main>
<script>if (window.opener) { try { window.opener.postMessage({ type: 'dataagent-mcp-sign-in', ok: ${outcome.ok} }, location.origin); } catch (e) {} }</script>
</body></html>`;
}
