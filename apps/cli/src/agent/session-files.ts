import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '#core/llm/chat-model.js';

/** A session id as the server accepts it: it names a file here, so nothing else gets through. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Thrown for a `--resume` id that is malformed or has no file. */
export class UnknownSessionError extends Error {}

/**
 * Local sessions: one JSON-lines file per session in `dir`, one chat message a line, appended
 * as the run adds them, so a later run (`--resume ID`) sends the model the whole conversation.
 */
export class SessionFiles {
  constructor(private readonly dir: string) {}

  /** @throws UnknownSessionError when the session has no file. */
  history(sessionId: string): ChatMessage[] {
    const file = this.fileOf(sessionId);
    if (!existsSync(file)) throw new UnknownSessionError(`no local session ${sessionId} in ${this.dir}`);
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as ChatMessage);
  }

  append(sessionId: string, message: ChatMessage): void {
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(this.fileOf(sessionId), `${JSON.stringify(message)}\n`);
  }

  private fileOf(sessionId: string): string {
    if (!SESSION_ID.test(sessionId)) throw new UnknownSessionError(`not a session id: ${JSON.stringify(sessionId)}`);
    return join(this.dir, `${sessionId}.jsonl`);
  }
}
