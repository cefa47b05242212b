import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '#core/llm/chat-model.js';
import type { SessionSummary } from './agent-backend.js';

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

  /** The sessions kept here, most recently written first, each titled by its first message. */
  list(): SessionSummary[] {
    if (!existsSync(this.dir)) return [];
    const files = readdirSync(this.dir).filter((name) => name.endsWith('.jsonl'));
    return files
      .map((name) => {
        const file = join(this.dir, name);
        // The first line is the first question.
        const first = readFileSync(file, 'utf8').split('\n', 1)[0];
        let title = '';
        try {
          const message = JSON.parse(first) as ChatMessage;
          title = typeof message.content === 'string' ? message.content : '';
        } catch {
          title = '(unreadable)';
        }
        return { id: name.slice(0, -'.jsonl'.length), title, updatedAt: statSync(file).mtime };
      })
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
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
