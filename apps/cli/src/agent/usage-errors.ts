/**
 * Errors that mean the command line asked for something that is not there (exit code 2). Kept
 * apart from the backends that throw them, so the entry point recognises them without loading a
 * backend it may not need.
 */

/** Thrown for an assistant id the catalog does not have. */
export class UnknownAssistantError extends Error {}

/** Thrown for an MCP config file that cannot be read or is not JSON of a known shape. */
export class McpConfigFileError extends Error {}
