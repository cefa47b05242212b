import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The browser a sign-in started in. The gateway's authorize step hands that browser a random
 * secret in an HttpOnly cookie and keeps only its hash with the pending sign-in; the callback
 * completes only where the cookie comes back. A `state` carried to another browser (the
 * authorization URL sent to someone else, who signs in there) finds no cookie, so another
 * person's code is never redeemed into the grant of the one who started the sign-in.
 */
export interface SignInBrowser {
  /** Goes into the cookie; never stored. */
  secret: string;
  /** Kept with the pending sign-in. */
  hash: string;
}

/** A fresh secret for the browser that opens an authorize URL. */
export function newSignInBrowser(): SignInBrowser {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashOf(secret) };
}

/**
 * The cookie's name for one sign-in: one cookie per sign-in, so two sign-ins started in the same
 * browser (two servers, two tabs) do not overwrite each other's.
 */
export function signInCookieName(state: string): string {
  return `dataagent_mcp_sign_in_${createHash('sha256').update(state).digest('hex').slice(0, 16)}`;
}

/** Whether `secret` (the cookie the callback received, if any) is the one handed out for `hash`. */
export function sameBrowser(secret: string | undefined, hash: string | undefined): boolean {
  if (!secret || !hash) return false;
  const got = Buffer.from(hashOf(secret), 'hex');
  const want = Buffer.from(hash, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The value of the cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    return pair.slice(at + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

function hashOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
