import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { parseSecretKey, SECRET_KEY_BYTES } from '../config/secret-key.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A short fingerprint of the key in each sealed value, so "another key" reads apart from "altered". */
const KEY_ID_BYTES = 6;

/** A sealed value that cannot be opened: not sealed by us, sealed with another key, or altered. */
export class SecretUnreadableError extends Error {
  constructor(readonly reason: 'malformed' | 'other_key' | 'altered') {
    super(
      reason === 'other_key'
        ? 'sealed with another DATAAGENT_SECRET_KEY'
        : reason === 'altered'
          ? 'altered since it was sealed (or bound to another owner)'
          : 'not a sealed value',
    );
    this.name = 'SecretUnreadableError';
  }
}

/**
 * Encrypts secret values at rest with AES-256-GCM: a random 96-bit IV per value, and a
 * context (whose value it is) bound as additional data, so a sealed value copied to another
 * row or field does not open there.
 *
 * Sealed form: `v1.<key id>.<base64url of iv | tag | ciphertext>`.
 */
export class SecretCipher {
  private readonly keyId: string;

  /** @throws Error when the key is not {@link SECRET_KEY_BYTES} bytes. */
  constructor(private readonly key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret key has ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
    this.keyId = createHash('sha256').update('dataagent-secret-key-id').update(key).digest().subarray(0, KEY_ID_BYTES).toString('base64url');
  }

  /**
   * The cipher for DATAAGENT_SECRET_KEY, or undefined when it is unset.
   * @throws Error when it is set but malformed (settings validation reports it first).
   */
  static fromSetting(text: string | undefined): SecretCipher | undefined {
    if (text === undefined || text.trim() === '') return undefined;
    const key = parseSecretKey(text);
    if (!key) throw new Error('DATAAGENT_SECRET_KEY is not 32 bytes in hex or base64');
    return new SecretCipher(key);
  }

  /** Encrypts `plain`, bound to `context` (the same context must be given to open it). */
  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${this.keyId}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /**
   * Decrypts a value sealed with {@link seal} under the same context.
   * @throws SecretUnreadableError when it is malformed, sealed with another key, or altered.
   */
  open(sealed: string, context: string): string {
    const [version, keyId, payload, extra] = sealed.split('.');
    if (version !== VERSION || !keyId || !payload || extra !== undefined) throw new SecretUnreadableError('malformed');
    if (keyId !== this.keyId) throw new SecretUnreadableError('other_key');
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretUnreadableError('malformed');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('altered');
    }
  }
}
