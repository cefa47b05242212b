import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import { ApiError } from './api-error.js';

function flatten(errors: ValidationError[], prefix = ''): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of errors) {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) out[path] = Object.values(e.constraints);
    Object.assign(out, flatten(e.children ?? [], path));
  }
  return out;
}

export function validationError(errors: ValidationError[]): ApiError {
  return invalidFields(flatten(errors));
}

/** A 422 naming each bad field: `details.fields` maps a field to its messages. */
export function invalidFields(fields: Record<string, string[]>, errorCode = 'validation_failed', details: Record<string, unknown> = {}): ApiError {
  const summary = Object.entries(fields).map(([f, m]) => `${f}: ${m.join(', ')}`).join('; ');
  return new ApiError(422, errorCode, `Invalid request: ${summary}`, { ...details, fields });
}

/**
 * Validates a plain object against a DTO class, for transports that have no pipe
 * (Socket.IO and WebSocket messages).
 * @throws ApiError 422 naming each bad field.
 */
export async function validateDto<T extends object>(cls: new () => T, value: unknown): Promise<T> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(422, 'validation_failed', 'Invalid request: payload must be an object', {});
  }
  const instance = plainToInstance(cls, value);
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
  if (errors.length) throw validationError(errors);
  return instance;
}
