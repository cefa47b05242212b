import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { repoRoot } from './repo-paths.js';

/** The scripted LLM server running as a process of its own, so its timers and writes do not share a CPU thread with anything measured. */
export interface LlmServerProcess {
  baseUrl: string;
  proc: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `dist/test/support/scripted-llm-server.js` on a free loopback port.
 *
 * @param env Extra environment (e.g. NODE_OPTIONS for a CPU profile).
 * @throws Error when the server does not print its base URL within `timeoutMs`.
 */
export async function startLlmServerProcess(env: NodeJS.ProcessEnv = {}, timeoutMs = 15_000): Promise<LlmServerProcess> {
  const proc = spawn(process.execPath, [`${repoRoot}dist/test/support/scripted-llm-server.js`, '--port', '0', '--chunk-interval-ms', '0'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(proc, 'exit');
  const output: string[] = [];
  proc.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const stop = async (graceMs = 5_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`scripted LLM server printed no base URL within ${timeoutMs} ms:\n${output.join('')}`)), timeoutMs);
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        try {
          const { baseUrl: url } = JSON.parse(line) as { baseUrl?: string };
          if (url) {
            clearTimeout(timer);
            resolve(url);
          }
        } catch {
          // not the ready line
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`scripted LLM server exited with ${code}:\n${output.join('')}`));
      });
    });
    return { baseUrl, proc, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
