/** Types of mcp-form.js for its spec (the UI itself is plain JavaScript, served as it is). */
export interface ServerForm {
  name: string;
  kind: 'stdio' | 'remote';
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
  description: string;
  keywords: string;
}
export function emptyForm(): ServerForm;
export class FormInputError extends Error {
  readonly field: string;
  constructor(field: string, message: string);
}
export function parseExample(text: string): { form: ServerForm; names: string[] };
export function formToServer(form: ServerForm): Record<string, unknown>;
export function readPastedConfig(text: string): unknown;
export function pasteOutcome(answer: unknown): { note: string | null; errors: string[] };
