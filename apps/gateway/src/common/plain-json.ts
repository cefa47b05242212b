import { ApiError } from './api-error.js';

/** Deeper request bodies and socket messages are refused: no API takes more than a few levels. */
export const MAX_JSON_DEPTH = 32;

/** Keys that name prototype machinery: they reach class-transformer's `new value.constructor()`. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A copy of parsed JSON that validation can take safely: objects and arrays only as deep as
 * `maxDepth` (walked with a stack of our own, so no depth overflows the call stack), and
 * without `__proto__`, `constructor` or `prototype` keys.
 * @throws ApiError 400 `too_deeply_nested`.
 */
export function plainJson(value: unknown, maxDepth = MAX_JSON_DEPTH): unknown {
  if (value === null || typeof value !== 'object') return value;
  const root: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  const stack: Array<[object, Record<string, unknown> | unknown[], number]> = [[value, root, 1]];
  while (stack.length > 0) {
    const [source, target, depth] = stack.pop()!;
    if (depth > maxDepth) {
      throw new ApiError(400, 'too_deeply_nested', `JSON nested deeper than ${maxDepth} levels`, { max_depth: maxDepth });
    }
    for (const [key, item] of Object.entries(source)) {
      if (FORBIDDEN_KEYS.has(key)) continue;
      let copy = item;
      if (item !== null && typeof item === 'object') {
        copy = Array.isArray(item) ? [] : {};
        stack.push([item, copy as Record<string, unknown> | unknown[], depth + 1]);
      }
      if (Array.isArray(target)) target[Number(key)] = copy;
      else target[key] = copy;
    }
  }
  return root;
}
