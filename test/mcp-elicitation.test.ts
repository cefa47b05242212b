import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, chatToDone, runEvent, sendChat, sendMessage } from './support/event-waits.js';
import { TestBrowser } from './support/browser.js';
import { ELICIT_SERVER, elicitRecord } from './support/mcp-elicit-servers.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';
import { Terminal } from './support/terminal.js';

const BIN = join(fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, ''), 'apps/cli/bin/dataagent.mjs');

const book = (restaurant: string) => `[[tool:booking__book_table {"restaurant":"${restaurant}"}]]`;
const kinds = (run: EventDict[]) => run.map((e) => e.event_type);

/** The operator's config: the elicitation server, with a tool timeout far below the time a person takes. */
function mcpConfig(dir: string): { file: string; record: string } {
  const record = join(dir, 'booking.jsonl');
  const file = join(dir, 'mcp.json');
  writeFileSync(file, JSON.stringify({ servers: [{ name: 'booking', command: process.execPath, args: [ELICIT_SERVER, 'stdio', '--record', record], timeout_ms: 500 }] }));
  return { file, record };
}

/**
 * A server's elicitation during a call, through the real gateway and worker: the question reaches
 * the person's socket, their answer reaches the server with the form's defaults filled in (over
 * Socket.IO, REST or plain WebSocket, from the run's owner only, once), and a decline, a URL or
 * an expiry ends as the server expects. The run waits on its worker meanwhile, and the call's own
 * timeout (500 ms here) does not run while the person answers.
 */
describe('MCP elicitation', () => {
  let system: TestSystem;
  let browser: TestBrowser;
  let dir: string;
  let record: ReturnType<typeof elicitRecord>;
  let configFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-elicit-'));
    const config = mcpConfig(dir);
    configFile = config.file;
    record = elicitRecord(config.record);
    // The server writes its record outside any workspace, which a sandbox would refuse.
    [system, browser] = await Promise.all([TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: config.file, DATAAGENT_ELICITATION_TIMEOUT: '60' } }), TestBrowser.launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asks over the socket; the accepted form reaches the server with its defaults filled, from its owner only, once', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: book('Chez Ada') });
      const call = await events.next(runEvent(ack.run_id, 'tool_call'));
      const request = await events.next(runEvent(ack.run_id, 'elicitation_request'));
      expect(request).toMatchObject({
        tool_call_id: call.tool_call_id,
        server: 'booking',
        mode: 'form',
        message: 'Booking a table at Chez Ada: who is coming?',
        allowed_actions: ['accept', 'decline', 'cancel'],
        requested_schema: { type: 'object', required: ['name'], properties: { guests: { type: 'integer', title: 'Guests', default: 2 }, seating: { enum: ['inside', 'terrace'], default: 'inside' } } },
      });
      // DATAAGENT_ELICITATION_TIMEOUT (60 s) from the moment it was asked.
      const timeLeft = Date.parse(request.expires_at) - Date.parse(request.timestamp);
      expect(timeLeft).toBeGreaterThan(59_000);
      expect(timeLeft).toBeLessThanOrEqual(60_000);

      // Another user's answer finds nothing, over REST and over their own socket.
      const foreign = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: OTHER_API_KEY, body: { action: 'accept', content: { name: 'Mallory' } } });
      expect({ status: foreign.status, code: foreign.body.error_code }).toEqual({ status: 404, code: 'elicitation_request_not_found' });
      const bob = await connectChat(system.url, OTHER_API_KEY);
      try {
        expect(await sendMessage(bob, 'elicitation_answer', { request_id: request.request_id, action: 'decline' })).toMatchObject({ ok: false, error_code: 'elicitation_request_not_found' });
      } finally {
        bob.disconnect();
      }
      // An answer that does not fit the form is refused, field by field, and the question stays open.
      const bad = await sendMessage(socket, 'elicitation_answer', { request_id: request.request_id, action: 'accept', content: { guests: 'many', pets: true } });
      expect(bad).toMatchObject({ ok: false, error_code: 'invalid_elicitation_content' });
      const refusal = events.events.find((e) => e.event_type === 'error' && e.error_code === 'invalid_elicitation_content') as EventDict & { details: { fields: Record<string, string[]> } };
      expect(Object.keys(refusal.details.fields).sort()).toEqual(['guests', 'name', 'pets']);

      // The person takes longer than the call's 500 ms timeout: the call waits for them. Proof
      // that the timeout has had its time: a call to the same server, made since, timed out.
      const stalled = await chatToDone(system.url, TEST_API_KEY, '[[tool:booking__stall {}]]');
      expect(stalled.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'timeout' });
      const answer = await sendMessage(socket, 'elicitation_answer', { request_id: request.request_id, action: 'accept', content: { name: 'Ada', high_chair: true } });
      const filled = { name: 'Ada', high_chair: true, guests: 2, seating: 'inside' };
      expect(answer).toEqual({ ok: true, request_id: request.request_id, action: 'accept', content: filled, accepted: true });
      const again = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: TEST_API_KEY, body: { action: 'decline' } });
      expect({ status: again.status, code: again.body.error_code, status_was: again.body.details?.status }).toEqual({ status: 409, code: 'elicitation_already_answered', status_was: 'accept' });

      const done = await events.done(ack.run_id);
      expect(done.cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(kinds(run).filter((k) => k !== 'text')).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'elicitation_request', 'elicitation', 'tool_result', 'usage', 'done']);
      expect(run.find((e) => e.event_type === 'elicitation')).toMatchObject({ request_id: request.request_id, action: 'accept', content: filled });
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: 'Booked Chez Ada for Ada: 2 guests, inside, with a high chair' });
      expect(record.elicitations().filter((e) => e.restaurant === 'Chez Ada')).toEqual([expect.objectContaining({ event: 'elicitation', action: 'accept', content: filled })]);

      // The question and its outcome are in the run's log: a client that comes back sees them.
      const later = await connectChat(system.url, TEST_API_KEY);
      const replay = new EventCollector(later);
      try {
        await sendMessage(later, 'resume', { session_id: ack.session_id, run_id: ack.run_id, after_seq: 0 });
        await replay.done(ack.run_id);
        expect(replay.ofRun(ack.run_id)).toEqual(run);
      } finally {
        later.disconnect();
      }
    } finally {
      socket.disconnect();
    }
  });

  it('a decline over REST reaches the server, whose result says so, and the run goes on', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: book('Le Refus') });
      const request = await events.next(runEvent(ack.run_id, 'elicitation_request'));
      const withContent = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: TEST_API_KEY, body: { action: 'decline', content: { name: 'x' } } });
      expect({ status: withContent.status, code: withContent.body.error_code }).toEqual({ status: 422, code: 'elicitation_content_not_allowed' });
      const declined = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: TEST_API_KEY, body: { action: 'decline' } });
      expect(declined).toMatchObject({ status: 200, body: { request_id: request.request_id, action: 'decline', accepted: true } });
      expect((await events.done(ack.run_id)).cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.find((e) => e.event_type === 'elicitation')).toEqual(expect.objectContaining({ action: 'decline' }));
      expect(run.find((e) => e.event_type === 'elicitation')).not.toHaveProperty('content');
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: 'The person declined the booking; nothing was booked' });
      expect(record.elicitations().filter((e) => e.restaurant === 'Le Refus')).toEqual([expect.objectContaining({ action: 'decline', content: null })]);
    } finally {
      socket.disconnect();
    }
  });

  it('cancelling the run closes its open question, and the question takes no answer after', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: book('Annule') });
      const request = await events.next(runEvent(ack.run_id, 'elicitation_request'));
      expect(await sendMessage(socket, 'cancel', { session_id: ack.session_id })).toMatchObject({ ok: true, cancelled: true });
      expect((await events.done(ack.run_id)).cancelled).toBe(true);
      assertWellFormedRun(events.ofRun(ack.run_id));
      const late = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: TEST_API_KEY, body: { action: 'accept', content: { name: 'Late' } } });
      expect({ status: late.status, code: late.body.error_code, status_was: late.body.details?.status, reason: late.body.details?.reason }).toEqual({ status: 409, code: 'elicitation_already_answered', status_was: 'cancel', reason: 'cancelled' });
    } finally {
      socket.disconnect();
    }
  });

  it('a URL elicitation carries the URL and is accepted over plain WebSocket, without content', async () => {
    const session = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const ws = new WebSocket(`${system.url.replace('http', 'ws')}/ws/chat/${session.body.session_id}`, { headers: { 'x-api-key': TEST_API_KEY } });
    const received: Array<Record<string, any>> = [];
    const waiters: Array<{ match: (m: Record<string, any>) => boolean; resolve: (m: Record<string, any>) => void }> = [];
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, any>;
      received.push(message);
      for (const w of [...waiters]) if (w.match(message)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(message);
    });
    const next = (match: (m: Record<string, any>) => boolean) => new Promise<Record<string, any>>((resolve) => (received.find(match) ? resolve(received.find(match)!) : waiters.push({ match, resolve })));
    try {
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ type: 'chat', payload: { message: '[[tool:booking__verify_account {}]]' } }));
      const request = await next((m) => m.event_type === 'elicitation_request');
      expect(request).toMatchObject({ mode: 'url', url: 'https://accounts.example.com/verify?session=abc', message: 'Verify your account on our site' });
      expect(request).not.toHaveProperty('requested_schema');
      ws.send(JSON.stringify({ type: 'elicitation_answer', payload: { request_id: request.request_id, action: 'accept', content: { x: 1 } } }));
      expect(await next((m) => m.type === 'ack' && m.ok === false)).toMatchObject({ error_code: 'elicitation_content_not_allowed' });
      ws.send(JSON.stringify({ type: 'elicitation_answer', payload: { request_id: request.request_id, action: 'accept' } }));
      expect(await next((m) => m.type === 'ack' && m.ok === true && m.request_id === request.request_id)).toMatchObject({ action: 'accept', accepted: true });
      await next((m) => m.event_type === 'done');
      const run = received.filter((m) => m.event_type && m.run_id) as EventDict[];
      assertWellFormedRun(run);
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: 'verification: accept' });
      expect(record.elicitations().filter((e) => e.tool === 'verify_account')).toEqual([expect.objectContaining({ mode: 'url', action: 'accept' })]);
    } finally {
      ws.close();
    }
  });

  it('the web UI renders the form from the schema, shows a refusal by field, and sends the answer', async () => {
    const watched = await browser.open(system.url);
    const { page } = watched;
    try {
      await page.goto('/');
      await page.getByTestId('api-key').fill(TEST_API_KEY);
      await page.getByTestId('sign-in').click();
      await page.getByTestId('signed-in-as').filter({ hasText: 'alice' }).waitFor();
      await page.getByTestId('message-input').fill(book('Web Bistro'));
      await page.getByTestId('send').click();

      const dialog = page.getByTestId('elicitation-dialog');
      await dialog.getByTestId('elicitation-message').filter({ hasText: 'Booking a table at Web Bistro: who is coming?' }).waitFor();
      // Each field with its title and default: a text box, a number, a choice, a checkbox.
      expect(await dialog.getByLabel('Name on the booking').inputValue()).toBe('');
      expect(await dialog.getByLabel('Guests').inputValue()).toBe('2');
      expect(await dialog.getByLabel('Seating').inputValue()).toBe('inside');
      expect(await dialog.getByLabel('High chair').isChecked()).toBe(false);
      expect(await dialog.getByText('Who the table is for').count()).toBe(1);
      expect(Number(await dialog.getByTestId('elicitation-countdown').innerText())).toBeGreaterThan(50);
      await watched.screenshot('elicitation-form');

      // Accepted without the required name: the gateway's refusal is shown at the field, the dialog stays.
      await dialog.getByLabel('Guests').fill('');
      await dialog.getByTestId('elicitation-accept').click();
      await dialog.getByTestId('elicitation-error').waitFor();
      expect(await dialog.getByLabel('Name on the booking').getAttribute('aria-invalid')).toBe('true');
      expect(await dialog.locator('.field-error').allInnerTexts()).toEqual(['is required']);

      await dialog.getByLabel('Name on the booking').fill('Grace');
      await dialog.getByLabel('Seating').selectOption('terrace');
      await dialog.getByTestId('elicitation-accept').click();
      await page.locator('[data-testid="assistant-message"][data-status="done"]').filter({ hasText: 'Booked Web Bistro for Grace' }).waitFor();
      expect(await dialog.isVisible()).toBe(false);
      // The emptied guests field took its default on the way.
      expect(record.elicitations().filter((e) => e.restaurant === 'Web Bistro')).toEqual([expect.objectContaining({ action: 'accept', content: { name: 'Grace', guests: 2, seating: 'terrace', high_chair: false } })]);
      expect(watched.foreignRequests()).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it.each(['remote', 'local'] as const)('the CLI (%s mode) asks for each field, says what does not fit, and sends the answer', async (mode) => {
    const restaurant = `Terminal Cafe ${mode}`;
    const args = mode === 'remote' ? ['--server', system.url, '--api-key', TEST_API_KEY] : ['--mcp-config', configFile];
    const env = mode === 'remote' ? {} : { OPENAI_BASE_URL: system.llm.baseUrl, OPENAI_API_KEY: 'sk-test-not-a-real-key', DATAAGENT_MODEL: 'scripted', DATAAGENT_CLI_HOME: join(dir, 'cli-home') };
    const term = Terminal.start([process.execPath, BIN, ...args], env);
    try {
      await term.waitFor(`DataAgent (${mode} mode)`);
      term.submit(book(restaurant));
      await term.waitFor(`booking asks: Booking a table at ${restaurant}: who is coming?`);
      term.press('Enter');
      await term.waitFor('1/4 Name on the booking (string; required)');
      term.press('Enter');
      await term.waitFor('Name on the booking is required');
      term.submit('Linus');
      await term.waitFor('2/4 Guests (integer; Enter: 2)');
      term.press('Enter');
      await term.waitFor('3/4 Seating (1) inside  2) terrace; Enter: inside)');
      term.submit('2');
      await term.waitFor('4/4 High chair (y/n; Enter: false)');
      term.submit('y');
      await term.waitFor(`Booked ${restaurant} for Linus: 2 guests, terrace, with a high chair`, 30_000);
    } finally {
      term.stop();
    }
    expect(record.elicitations().filter((e) => e.restaurant === restaurant)).toEqual([expect.objectContaining({ action: 'accept', content: { name: 'Linus', guests: 2, seating: 'terrace', high_chair: true } })]);
  });
});

describe('MCP elicitation: expiry', () => {
  let system: TestSystem;
  let dir: string;
  let record: ReturnType<typeof elicitRecord>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-elicit-'));
    const config = mcpConfig(dir);
    record = elicitRecord(config.record);
    system = await TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: config.file, DATAAGENT_ELICITATION_TIMEOUT: '0.5' } });
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('no answer before the expiry is cancel, as the server sees it; a late answer is refused', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: book('Trop Tard') });
      const request = await events.next(runEvent(ack.run_id, 'elicitation_request'));
      expect((await events.done(ack.run_id)).cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.find((e) => e.event_type === 'elicitation')).toEqual(expect.objectContaining({ request_id: request.request_id, action: 'cancel', reason: 'expired' }));
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: 'The person cancelled; nothing was booked' });
      expect(record.elicitations().filter((e) => e.restaurant === 'Trop Tard')).toEqual([expect.objectContaining({ action: 'cancel' })]);
      const late = await api(system.url, 'POST', `/elicitations/${request.request_id}`, { apiKey: TEST_API_KEY, body: { action: 'accept', content: { name: 'Late' } } });
      expect({ status: late.status, code: late.body.error_code, reason: late.body.details?.reason }).toEqual({ status: 409, code: 'elicitation_already_answered', reason: 'expired' });
    } finally {
      socket.disconnect();
    }
  });
});
