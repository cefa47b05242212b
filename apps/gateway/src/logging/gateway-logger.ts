import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import type { Level, Logger as Pino } from 'pino';

/** The pino logger of the HTTP request being handled (its lines carry the request's id); none outside a request. */
export const requestLog = new AsyncLocalStorage<Pino>();

/** A stack trace, as Nest's exception handlers pass one: `error(message, stack, context)`. */
const STACK = /\n\s*at /;

/**
 * Nest's logger (`app.useLogger`), written to pino: every `new Logger('ws').warn(…)` of the
 * gateway and Nest's own lines become JSON lines with a `context` field, and inside a request
 * they carry its `request_id`.
 */
export class GatewayLogger implements LoggerService {
  /** @param root The logger lines go to outside a request. */
  constructor(private readonly root: Pino) {}

  /** pino itself, for fields of our own: the current request's logger inside a request, the root one outside. */
  get pino(): Pino {
    return requestLog.getStore() ?? this.root;
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest's contract: the message (text, Error or fields), then any extras, and the Logger's context last. */
  private write(level: Level, message: unknown, params: unknown[]): void {
    const fields: Record<string, unknown> = {};
    const rest = [...params];
    const last = rest.at(-1);
    if (typeof last === 'string' && !STACK.test(last)) fields.context = rest.pop();
    const stack = rest.find((p): p is string => typeof p === 'string' && STACK.test(p));
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...message });
    } else {
      this.pino[level](fields, String(message));
    }
  }
}
