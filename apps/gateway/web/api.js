/** The REST API under /api/v1, with the signed-in key as X-API-Key. */

const KEY_STORAGE = 'dataagent.apiKey';

/** A failed request: the API's `{error_code, message, details}` and its HTTP status (0: no answer). */
export class ApiFailure extends Error {
  constructor(status, errorCode, message, details = {}) {
    super(message);
    this.status = status;
    this.errorCode = errorCode;
    this.details = details;
  }
}

/** The key kept from the last sign-in; '' when none (auth disabled locally). */
export function storedKey() {
  return localStorage.getItem(KEY_STORAGE) ?? '';
}

export function storeKey(key) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

/**
 * One JSON request.
 * @throws ApiFailure for any answer but 2xx, and with status 0 when the gateway cannot be reached.
 */
export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  const key = storedKey();
  if (key) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiFailure(0, 'unreachable', `The gateway cannot be reached (${err.message})`);
  }
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    throw new ApiFailure(res.status, parsed?.error_code ?? `http_${res.status}`, parsed?.message ?? `${method} ${path} answered ${res.status}`, parsed?.details ?? {});
  }
  return parsed;
}

/** `{error_code, message, details}` of a Socket.IO connection refused by the gateway, as an ApiFailure. */
export function socketFailure(err) {
  const data = err?.data;
  if (data && typeof data.error_code === 'string') {
    const status = data.error_code.endsWith('_api_key') ? 401 : 0;
    return new ApiFailure(status, data.error_code, data.message ?? data.error_code, data.details ?? {});
  }
  return new ApiFailure(0, 'unreachable', `The gateway cannot be reached (${err?.message ?? 'connection failed'})`);
}
