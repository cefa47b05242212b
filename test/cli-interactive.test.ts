import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVERYTHING } from './support/mcp-servers.js';
import { defaultScript, lastUserText, rawDirective } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';
import { Terminal } from './support/terminal.js';

const root = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');
const BIN = join(root, 'apps/cli/bin/dataagent.mjs');

const MARKDOWN = rawDirective(['# Sales report\n\nRevenue is **up 12%** in `EMEA`.\n\n', '```sql\nSELECT region, SUM(amount)\nFROM sales GROUP BY region;\n```\n\n', '- first\n- **second**\n']);
const write = (path: string, content: string) => `[[tool:write_file ${JSON.stringify({ path, content })}]]`;
const BROKEN = { command: 'dataagent-test-no-such-command' };

/**
 * The interactive `dataagent` in a real terminal (tmux), in both modes against one scripted LLM:
 * local (the agent in the CLI's process) and remote (a gateway and a worker this file starts).
 * One CLI per mode runs the scenarios in turn; each starts from a cleared screen.
 */
describe('interactive dataagent in a terminal', () => {
  let system: TestSystem;
  let home: string;
  let mcpFile: string;

  beforeAll(async () => {
    system = await TestSystem.start();
    home = mkdtempSync(join(tmpdir(), 'da-cli-tty-'));
    mcpFile = join(home, 'mcp.json');
    writeFileSync(mcpFile, JSON.stringify({ mcpServers: { broken: BROKEN } }));
  });
  afterAll(async () => {
    await system?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  describe.each(['local', 'remote'] as const)('%s mode', (mode) => {
    let term: Terminal;
    const workspaceFile = (name: string) => (mode === 'local' ? join(home, 'workspaces', 'local', 'files', name) : join(system.dataDir, 'workspaces', 'acme', 'alice', 'files', name));

    beforeAll(async () => {
      const args = mode === 'local' ? ['--mcp-config', mcpFile] : ['--server', system.url, '--api-key', TEST_API_KEY];
      const env = { OPENAI_BASE_URL: system.llm.baseUrl, OPENAI_API_KEY: 'sk-test-not-a-real-key', DATAAGENT_MODEL: 'scripted', DATAAGENT_CLI_HOME: home };
      term = Terminal.start([process.execPath, BIN, ...args], mode === 'local' ? env : {});
      await term.waitFor(`DataAgent (${mode} mode)`);
    });
    afterAll(() => term?.stop());

    /** A fresh screen for the next scenario: earlier answers must not satisfy its waits. */
    async function clear(): Promise<void> {
      term.submit('/clear');
      await term.waitFor((s) => !s.includes('DataAgent (') && /›\s*\n/.test(s));
    }

    it('shows the spinner until the first token, then the answer as rendered markdown', async () => {
      if (mode === 'local') await term.waitFor(/! MCP server broken not connected: .+/);
      await clear();
      // The model holds its first token until the spinner has been seen.
      let spinnerSeen!: () => void;
      const seen = new Promise<void>((resolve) => (spinnerSeen = resolve));
      system.llm.setScript((req) => [{ until: seen }, ...defaultScript(req)]);
      term.submit(`report ${MARKDOWN}`);
      try {
        await term.waitFor('thinking…');
      } finally {
        spinnerSeen();
        system.llm.setScript();
      }
      // The last chunk's list item, rendered: the answer is complete.
      const screen = await term.waitFor(/^\s+\* second\s*$/m);
      expect(screen).not.toContain('thinking…');
      expect(screen).toContain('Revenue is up 12% in EMEA.');
      expect(screen).toContain('SELECT region, SUM(amount)');
      expect(screen).toMatch(/^\s+\* first\s*$/m);
      // The markdown's own syntax is gone: rendered, not echoed.
      expect(screen).not.toContain('**');
      expect(screen).not.toContain('```');
    });

    it('asks before write_file: approve shows the diff, reject cancels the run, approve all stops asking', async () => {
      await clear();
      term.submit(`save ${write('files/approved.txt', 'alpha\nbeta')}`);
      await term.waitFor('approve write_file?');
      expect(term.screen()).toContain('path: files/approved.txt');
      term.press('Down');
      await term.waitFor('❯ Reject');
      term.press('Up');
      await term.waitFor(/❯ Approve\s+│/);
      term.press('Enter');
      let screen = await term.waitFor(/✎ create files\/approved\.txt\s+\+2 -0/);
      expect(screen).toMatch(/\+alpha\s/);
      expect(screen).toMatch(/\+beta\s/);
      await term.waitFor('Tool write_file returned');
      expect(readFileSync(workspaceFile('approved.txt'), 'utf8')).toBe('alpha\nbeta');

      await clear();
      term.submit(`save ${write('files/rejected.txt', 'no')}`);
      await term.waitFor('approve write_file?');
      term.press('Down');
      await term.waitFor('❯ Reject');
      term.press('Enter');
      await term.waitFor('⊘ cancelled: the call was rejected');
      expect(term.screen()).toContain('✘ rejected: write_file');
      expect(existsSync(workspaceFile('rejected.txt'))).toBe(false);

      await clear();
      term.submit(`save ${write('files/all-1.txt', 'one')}`);
      await term.waitFor('approve write_file?');
      term.press('Down', 'Down');
      await term.waitFor('❯ Approve all');
      term.press('Enter');
      await term.waitFor('✎ create files/all-1.txt');
      await term.waitFor('Tool write_file returned');
      term.submit(`again ${write('files/all-2.txt', 'two')}`);
      screen = await term.waitFor((s) => s.includes('✎ create files/all-2.txt') && s.includes('Tool write_file returned: Created files/all-2.txt'));
      // Asked once, for the first call only.
      expect(screen.match(/✔ approved/g)).toHaveLength(1);
      expect(readFileSync(workspaceFile('all-2.txt'), 'utf8')).toBe('two');
    });

    it('Ctrl-C cancels the answer mid-stream, and the UI takes the next question', async () => {
      await clear();
      term.submit('long [[chunks:400]] [[slow:30]]');
      await term.waitFor('tok3 ');
      term.press('C-c');
      const screen = await term.waitFor('⊘ cancelled');
      expect(screen).not.toContain('tok399');
      term.submit('and now?');
      await term.waitFor((s) => /› and now\?[\s\S]*Hello from the scripted LLM server\./.test(s));
    });

    it('/sessions lists earlier sessions and /resume continues one', async () => {
      await clear();
      term.submit('/new');
      await term.waitFor('new session');
      term.submit(`my name is Ada (${mode})`);
      await term.waitFor(/› my name is Ada \(\w+\)\n+Hello from the scripted LLM server\./);
      await clear();
      term.submit('/sessions');
      const listed = await term.waitFor(`my name is Ada (${mode})`);
      const id = new RegExp(`(\\S+)\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+my name is Ada \\(${mode}\\)`).exec(listed)?.[1];
      expect(id).toBeDefined();
      term.submit('/new');
      await term.waitFor('new session');
      term.submit(`/resume ${id}`);
      await term.waitFor(`resumed session ${id}`);
      const request = system.llm.nextRequest();
      term.submit('what is my name?');
      const seen = await request;
      expect(lastUserText(seen)).toBe('what is my name?');
      expect((seen.body.messages ?? []).map((m) => m.content)).toContain(`my name is Ada (${mode})`);
      await term.waitFor(/› what is my name\?\n+Hello from the scripted LLM server\./);
    });

    it(mode === 'local' ? '/mcp reload connects a server added to mcp.json; the broken one stays failed' : '/mcp list shows the gateway\'s servers; /mcp reload says it is local only', async () => {
      await clear();
      if (mode === 'remote') {
        term.submit('/mcp list');
        // The gateway's answer: none of this key's own, and whatever global server statuses the shared Redis holds from other test files.
        await term.waitFor(/no MCP servers on the gateway for this key|MCP servers:/);
        term.submit('/mcp reload');
        await term.waitFor('/mcp reload is a local-mode command');
        return;
      }
      term.submit('/mcp list');
      let screen = await term.waitFor(/broken\s+failed: .+/);
      expect(screen).not.toContain('everything');
      writeFileSync(mcpFile, JSON.stringify({ mcpServers: { broken: BROKEN, everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
      term.submit('/mcp reload');
      screen = await term.waitFor(/everything\s+connected\s+\d+ tools/);
      expect(screen).toContain('MCP config reloaded: connected everything');
      expect(screen).toMatch(/broken\s+failed: .+/);
      term.submit('[[tool:everything__echo {"message":"from the terminal"}]] go');
      await term.waitFor('Echo: from the terminal');
    });

    it('Ctrl-D on an empty line exits', async () => {
      term.press('C-d');
      await term.waitFor('[exited 0]');
    });
  });

  it('waitFor gives up after its timeout, showing the screen', async () => {
    const term = Terminal.start(['sh', '-c', 'echo on screen'], {});
    try {
      await expect(term.waitFor('never shown', 300)).rejects.toThrow(/did not show never shown within 300 ms; it shows:\n[\s\S]*on screen/);
    } finally {
      term.stop();
    }
  });
});
