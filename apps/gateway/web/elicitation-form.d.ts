/** Types of elicitation-form.js for its spec (the UI itself is plain JavaScript, served as it is). */
export interface FormField {
  name: string;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'choice' | 'multi';
  label: string;
  description: string;
  required: boolean;
  default: unknown;
  options: Array<{ value: string; label: string }>;
  format: string | null;
  min: number | null;
  max: number | null;
}
export function formFields(schema: Record<string, unknown> | undefined): FormField[];
export function initialValues(fields: FormField[]): Record<string, unknown>;
export function formContent(fields: FormField[], values: Record<string, unknown>): Record<string, unknown>;
