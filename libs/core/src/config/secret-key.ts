import { registerDecorator } from 'class-validator';

/** Bytes of DATAAGENT_SECRET_KEY: an AES-256 key. */
export const SECRET_KEY_BYTES = 32;

const HEX = /^[0-9a-f]{64}$/i;
const BASE64 = /^[A-Za-z0-9+/]{43}=?$|^[A-Za-z0-9_-]{43}$/;

/**
 * Reads DATAAGENT_SECRET_KEY: 32 bytes written as 64 hex characters, or as base64 (standard
 * or URL-safe, padded or not). White space around it is ignored.
 * @returns the key, or null when the text is neither.
 */
export function parseSecretKey(text: string): Buffer | null {
  const value = text.trim();
  if (HEX.test(value)) return Buffer.from(value, 'hex');
  if (!BASE64.test(value)) return null;
  const key = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === SECRET_KEY_BYTES ? key : null;
}

/** Validates DATAAGENT_SECRET_KEY with {@link parseSecretKey}; the message never shows the value. */
export function IsSecretKey(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isSecretKey',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseSecretKey(value) !== null,
        defaultMessage: () => `must be ${SECRET_KEY_BYTES} bytes written as 64 hex characters or in base64 (make one with: openssl rand -hex 32)`,
      },
    });
}
