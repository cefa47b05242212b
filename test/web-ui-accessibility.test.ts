import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { TestBrowser, type ViewportName, type WatchedPage } from './support/browser.js';
import { api } from './support/chat-clients.js';
import { chatToDone } from './support/event-waits.js';
import { freePort } from './support/mcp-servers.js';
import { rawDirective } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/** axe-core's browser build, injected into the page under test. */
const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** What the page functions below use of the browser's globals (the project compiles without the DOM lib). */
interface FocusedElement {
  getAttribute(name: string): string | null;
  tagName: string;
}
declare const document: { activeElement: FocusedElement | null };
interface AxeNode {
  target: string[];
  failureSummary?: string;
}
interface AxeRule {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: AxeNode[];
}
declare const axe: { run(context: unknown, options: Record<string, unknown>): Promise<{ violations: AxeRule[] }> };
declare const window: Record<string, unknown>;

/** One axe-core violation, as a test failure message shows it. */
interface Violation {
  rule: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** The findings the issue reported on the chat and MCP tabs: none may come back, whatever their impact. */
const REPORTED_RULES = ['color-contrast', 'landmark-one-main', 'region', 'aria-allowed-role'];

/**
 * The web UI judged by axe-core 4 in Debian's Chromium, in the light and the dark scheme, with
 * what a person has on screen: a conversation (markdown, a tool card, a todo list, a file diff,
 * a stopped and a failed run), the approval dialog, and the MCP tab with a server, its error
 * and the add form. And the chat driven by the keyboard alone: send, stop, approve, reject.
 */
describe('web UI accessibility', () => {
  let system: TestSystem;
  let browser: TestBrowser;
  let opened: WatchedPage[] = [];

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      TestSystem.start({ env: { DATAAGENT_HITL_TIMEOUT: '120', DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1' } }),
      TestBrowser.launch(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
  });

  afterEach(async () => {
    for (const watched of opened) await watched.close();
    opened = [];
  });

  async function open(viewport: ViewportName = 'desktop'): Promise<Page> {
    const watched = await browser.open(system.url, viewport, { bypassCSP: true });
    opened.push(watched);
    await watched.page.goto('/');
    return watched.page;
  }

  async function signIn(page: Page): Promise<void> {
    await page.getByTestId('api-key').fill(TEST_API_KEY);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('signed-in-as').filter({ hasText: 'alice' }).waitFor();
  }

  const turn = (page: Page, runId: string, status?: string) =>
    page.locator(`[data-testid="assistant-message"][data-run-id="${runId}"]${status ? `[data-status="${status}"]` : ''}`);

  /** Starts a run from whatever `submit` does; returns its run id once its turn is on screen. */
  async function newRun(page: Page, submit: () => Promise<void>): Promise<string> {
    const turns = page.locator('[data-testid="assistant-message"][data-run-id]:not([data-run-id=""])');
    const before = await turns.count();
    await submit();
    const started = turns.nth(before);
    await started.waitFor();
    return (await started.getAttribute('data-run-id'))!;
  }

  const send = (page: Page, text: string) =>
    newRun(page, async () => {
      await page.getByTestId('message-input').fill(text);
      await page.getByTestId('send').click();
    });

  /** axe-core's violations on the page as it is, in light and in dark. */
  async function audit(page: Page, where: string): Promise<Violation[]> {
    if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SCRIPT });
    const found: Violation[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const rules = await page.evaluate(async () => (await axe.run(document, { resultTypes: ['violations'] })).violations);
      for (const rule of rules) {
        found.push({ rule: rule.id, impact: rule.impact ?? 'unknown', help: `${where}, ${colorScheme}: ${rule.help}`, nodes: rule.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`) });
      }
    }
    await page.emulateMedia({ colorScheme: null });
    return found;
  }

  /** Violations counted by impact (rules, and the elements they flag), for the log. */
  function figures(violations: Violation[]): string {
    const by = new Map<string, { rules: number; nodes: number }>();
    for (const v of violations) {
      const entry = by.get(v.impact) ?? { rules: 0, nodes: 0 };
      entry.rules++;
      entry.nodes += v.nodes.length;
      by.set(v.impact, entry);
    }
    const order = ['critical', 'serious', 'moderate', 'minor', 'unknown'];
    return order.filter((i) => by.has(i)).map((i) => `${i} ${by.get(i)!.rules} (${by.get(i)!.nodes} elements)`).join(', ') || 'none';
  }

  it('finds no serious or critical axe-core violation on the chat tab (with an approval waiting) and on the MCP tab', async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}/mcp`;
    expect((await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: TEST_API_KEY, body: { name: 'offline', url: unreachable, description: 'Not running' } })).status).toBe(201);
    // A run opens alice's servers: the worker reports this one's error, which the MCP tab shows.
    await chatToDone(system.url, TEST_API_KEY, 'hello');

    const page = await open('tall');
    await signIn(page);
    const todos = [
      { content: 'Load the CSV', status: 'completed' },
      { content: 'Compute totals', status: 'in_progress' },
      { content: 'Write the report', status: 'pending' },
    ];
    const planned = await send(page, `${rawDirective(['## Totals\n\n', '| Region | Q1 |\n|---|---:|\n| North | 1 200 |\n\n', 'Some **bold**, `code` and a [link](/docs).'])}`);
    await turn(page, planned, 'done').waitFor();
    const tooled = await send(page, `[[tool:write_todos ${JSON.stringify({ todos })}]]`);
    await turn(page, tooled, 'done').waitFor();
    const failed = await send(page, '[[error:400]]');
    await turn(page, failed, 'failed').waitFor();
    const stopped = await send(page, '[[chunks:400]] [[slow:50]]');
    await page.getByTestId('stop').click();
    await turn(page, stopped, 'cancelled').waitFor();
    const approved = await send(page, '[[tool:write_file {"path":"a11y/approved.txt","content":"one\\ntwo"}]]');
    const dialog = page.getByTestId('hitl-dialog');
    await dialog.waitFor();
    const violations = await audit(page, 'chat tab, approval open');
    await dialog.getByTestId('hitl-approve').click();
    await turn(page, approved, 'done').waitFor();
    await page.getByTestId('file-diff').last().waitFor();
    await page.getByTestId('tool-card-toggle').last().click();
    violations.push(...(await audit(page, 'chat tab, after the approval')));

    await page.getByTestId('tab-mcp').click();
    await page.getByTestId('mcp-form').waitFor();
    await page.locator('[data-testid="mcp-server"][data-name="offline"][data-status="error"]').waitFor({ timeout: 30_000 });
    await page.getByTestId('mcp-name').fill('bad name!');
    await page.getByTestId('mcp-add').click();
    await page.getByTestId('mcp-error').waitFor();
    violations.push(...(await audit(page, 'MCP tab')));

    console.log(`web-ui-accessibility: axe-core in Chromium ${browser.version()}: ${figures(violations)}`);
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    expect(violations.filter((v) => REPORTED_RULES.includes(v.rule))).toEqual([]);
  });

  it('sends, stops, approves and rejects with the keyboard alone', async () => {
    const page = await open();
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? null);
    /** Presses Tab (Shift+Tab with `back`) until the element with `testId` has the focus. */
    const tabTo = async (testId: string, back = false) => {
      for (let i = 0; i < 30 && (await focused()) !== testId; i++) await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
      expect(await focused()).toBe(testId);
    };
    const typeAndEnter = (text: string) =>
      newRun(page, async () => {
        expect(await focused()).toBe('message-input');
        await page.keyboard.type(text);
        await page.keyboard.press('Enter');
      });

    await tabTo('api-key');
    await page.keyboard.type(TEST_API_KEY);
    await page.keyboard.press('Enter');
    await page.getByTestId('signed-in-as').filter({ hasText: 'alice' }).waitFor();
    // Signed in, the cursor is where the person types.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'message-input');

    const sent = await typeAndEnter('hello by keyboard');
    await turn(page, sent, 'done').waitFor();
    expect(await page.getByTestId('user-message').last().innerText()).toBe('hello by keyboard');

    // Stop: the one control after the message box while a run streams (Send has nothing to send).
    const long = await typeAndEnter('[[chunks:400]] [[slow:50]]');
    await turn(page, long, 'streaming').locator('.markdown').first().waitFor();
    await tabTo('stop');
    await page.keyboard.press('Enter');
    await turn(page, long, 'cancelled').waitFor();
    // The Stop button is disabled now: the focus goes back to the message box, not to nowhere.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'message-input');

    const file = (name: string) => join(system.dataDir, 'workspaces', 'acme', 'alice', 'keyboard', name);
    const write = (name: string) => `[[tool:write_file {"path":"keyboard/${name}","content":"by keyboard"}]]`;
    const dialog = page.getByTestId('hitl-dialog');

    // Approve: the question opens on Approve, and Enter approves.
    const approved = await typeAndEnter(write('approved.txt'));
    await dialog.waitFor();
    expect(await focused()).toBe('hitl-approve');
    await page.keyboard.press('Enter');
    await turn(page, approved, 'done').waitFor();
    expect(readFileSync(file('approved.txt'), 'utf8')).toBe('by keyboard');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'message-input');

    // Reject: Tab to Reject, Space presses it.
    const rejected = await typeAndEnter(write('rejected.txt'));
    await dialog.waitFor();
    await tabTo('hitl-reject');
    await page.keyboard.press('Space');
    await turn(page, rejected, 'cancelled').waitFor();
    expect(await turn(page, rejected).locator('[data-testid="tool-card"]').getAttribute('data-status')).toBe('rejected');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'message-input');

    // Escape rejects too: a question is never left unanswered behind a closed dialog.
    const escaped = await typeAndEnter(write('escaped.txt'));
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await turn(page, escaped, 'cancelled').waitFor();
    expect(existsSync(file('rejected.txt')) || existsSync(file('escaped.txt'))).toBe(false);
    expect(await dialog.isVisible()).toBe(false);
  });
});
