import { cookieValue, newSignInBrowser, sameBrowser, signInCookieName } from './sign-in-browser.js';

describe('the browser a sign-in started in', () => {
  it('knows its own secret and nobody else’s', () => {
    const started = newSignInBrowser();
    const other = newSignInBrowser();
    expect(started.hash).not.toContain(started.secret);
    expect(sameBrowser(started.secret, started.hash)).toBe(true);
    expect(sameBrowser(other.secret, started.hash)).toBe(false);
    expect(sameBrowser(undefined, started.hash)).toBe(false);
    expect(sameBrowser('', started.hash)).toBe(false);
    // A sign-in pending from before browsers were bound has no hash: it finishes nowhere.
    expect(sameBrowser(started.secret, undefined)).toBe(false);
  });

  it('names one cookie per sign-in', () => {
    expect(signInCookieName('state-a')).not.toBe(signInCookieName('state-b'));
    expect(signInCookieName('state-a')).toMatch(/^dataagent_mcp_sign_in_[0-9a-f]{16}$/);
  });

  it('reads a cookie by its exact name', () => {
    const header = 'other=1; dataagent_mcp_sign_in_ab=not-this; dataagent_mcp_sign_in_abc = "secret=x" ';
    expect(cookieValue(header, 'dataagent_mcp_sign_in_abc')).toBe('secret=x');
    expect(cookieValue(header, 'dataagent_mcp_sign_in_a')).toBeUndefined();
    expect(cookieValue(undefined, 'other')).toBeUndefined();
  });
});
