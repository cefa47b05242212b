import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** The widths the UI must read well at (issue 11): a desktop and a small phone. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 360, height: 740 },
  /** A desktop tall enough that a conversation needs no scrolling: axe-core cannot judge the contrast of text scrolled out of view. */
  tall: { width: 1280, height: 2400 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** Committed, so the README shows what the browser tests last saw. */
export const SCREENSHOTS_DIR = join(fileURLToPath(new URL('../../', import.meta.url)).replace(/dist\/$/, ''), 'docs', 'screenshots');

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Debian's Chromium driven by playwright-core, launched once per test file; each test opens
 * its own context (fresh storage) with {@link TestBrowser.open}.
 */
export class TestBrowser {
  private constructor(private readonly browser: Browser) {}

  /** @throws Error when the global setup did not provide Chromium (tests not run through jest). */
  static async launch(): Promise<TestBrowser> {
    const executablePath = process.env.DATAAGENT_TEST_CHROMIUM;
    if (!executablePath) throw new Error("DATAAGENT_TEST_CHROMIUM is not set: run the browser tests through jest, whose global setup installs Debian's chromium");
    const browser = await chromium.launch({
      executablePath,
      headless: true,
      timeout: 30_000,
      args: [
        // Chromium's sandbox refuses to start as root, which CI and the dev machines are.
        ...(isRoot ? ['--no-sandbox'] : []),
        // Nothing but loopback resolves: a page or Chromium itself reaching out fails at once.
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
      ],
    });
    return new TestBrowser(browser);
  }

  /** The browser's version, e.g. `156.0.8078.108`: printed by tests whose outcome depends on it. */
  version(): string {
    return this.browser.version();
  }

  /**
   * A new context and page at `url`'s origin; nothing is loaded yet. `bypassCSP` lets a test
   * inject its own script (axe-core) into a page whose policy allows only the gateway's.
   */
  async open(url: string, viewport: ViewportName = 'desktop', options: { bypassCSP?: boolean } = {}): Promise<WatchedPage> {
    const context = await this.browser.newContext({ viewport: VIEWPORTS[viewport], baseURL: url, bypassCSP: options.bypassCSP ?? false });
    return new WatchedPage(await context.newPage(), context, new URL(url));
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** A page that records what a user would not see: console errors, uncaught exceptions and every request. */
export class WatchedPage {
  /** Console messages of type error and uncaught exceptions, in order. */
  readonly consoleErrors: string[] = [];
  /** Every URL the page requested: documents, assets, XHR/fetch and WebSockets. */
  readonly requests: string[] = [];

  constructor(
    readonly page: Page,
    readonly context: BrowserContext,
    private readonly origin: URL,
  ) {
    page.on('console', (message) => {
      if (message.type() === 'error') this.consoleErrors.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => this.consoleErrors.push(`uncaught: ${error.message}`));
    page.on('request', (request) => this.requests.push(request.url()));
    page.on('websocket', (socket) => this.requests.push(socket.url()));
  }

  /** Requests that left the gateway's host and port (data:, blob: and about: are not network). */
  foreignRequests(): string[] {
    return this.requests.filter((url) => {
      const parsed = new URL(url);
      if (['data:', 'blob:', 'about:'].includes(parsed.protocol)) return false;
      return !['http:', 'https:', 'ws:', 'wss:'].includes(parsed.protocol) || parsed.host !== this.origin.host;
    });
  }

  /** Console errors that match none of `expected` (e.g. the browser's own line for an expected 401). */
  unexpectedConsoleErrors(expected: RegExp[] = []): string[] {
    return this.consoleErrors.filter((line) => !expected.some((pattern) => pattern.test(line)));
  }

  /**
   * Writes `<name>.png` and returns its path: into docs/screenshots with
   * DATAAGENT_UPDATE_SCREENSHOTS=1, else into a temporary folder, so a test run leaves the tree clean.
   */
  async screenshot(name: string): Promise<string> {
    const dir = process.env.DATAAGENT_UPDATE_SCREENSHOTS === '1' ? SCREENSHOTS_DIR : join(tmpdir(), 'dataagent-screenshots');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${name}.png`);
    await this.page.screenshot({ path, animations: 'disabled' });
    return path;
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}
