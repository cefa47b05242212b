import type { SchemaObject } from '@nestjs/swagger';

/**
 * Schemas for the OpenAPI document where a field holds JSON of no fixed shape. A property typed
 * `unknown` would otherwise be documented as an object, which a string or a list is not.
 */

/** Any JSON value, null included. */
export const ANY_JSON: { oneOf: SchemaObject[]; nullable: true } = {
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object', additionalProperties: true }, { type: 'array', items: {} }],
  nullable: true,
};
