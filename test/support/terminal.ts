import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often {@link Terminal.waitFor} reads the screen. */
const POLL_MS = 50;

let sockets = 0;

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * A program in a real terminal: a tmux pane on a private server (`-L`), driven with send-keys and
 * read with capture-pane, as a person at a terminal would use it. The command's exit status is
 * printed on the pane as `[exited N]` and the pane stays, so a test can see it end.
 */
export class Terminal {
  private constructor(private readonly socket: string) {}

  /**
   * Starts `argv` in a `width`×`height` pane with exactly `env` (plus PATH, HOME and TERM).
   */
  static start(argv: string[], env: NodeJS.ProcessEnv, { width = 120, height = 40 } = {}): Terminal {
    const terminal = new Terminal(`da-test-${process.pid}-${++sockets}`);
    const base = { PATH: process.env.PATH ?? '', HOME: env.HOME ?? process.env.HOME ?? '/tmp', TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    const vars = Object.entries({ ...base, ...env }).map(([name, value]) => `${name}=${quote(String(value))}`);
    const command = `env -i ${vars.join(' ')} ${argv.map(quote).join(' ')}; echo "[exited $?]"; sleep 600`;
    terminal.tmux('new-session', '-d', '-x', String(width), '-y', String(height), command);
    return terminal;
  }

  /** The visible screen as plain text, wrapped lines joined. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-J');
  }

  /** Types text as keys (literally: no key names). */
  type(text: string): void {
    this.tmux('send-keys', '-l', text);
  }

  /** Presses keys by tmux name: `Enter`, `Up`, `Down`, `C-c`, `C-d`. */
  press(...keys: string[]): void {
    this.tmux('send-keys', ...keys);
  }

  /** Types a line and presses Enter. */
  submit(text: string): void {
    this.type(text);
    this.press('Enter');
  }

  /**
   * Reads the screen until `expected` is on it (a substring, a pattern, or a test of the screen)
   * and returns that screen.
   * @throws Error with the last screen when it does not show within `timeoutMs`.
   */
  async waitFor(expected: string | RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const matches = typeof expected === 'function' ? expected : typeof expected === 'string' ? (s: string) => s.includes(expected) : (s: string) => expected.test(s);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (matches(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`the terminal did not show ${String(expected)} within ${timeoutMs} ms; it shows:\n${screen}`);
      await sleep(POLL_MS);
    }
  }

  /** Stops the tmux server, and the program with it. */
  stop(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  }
}
