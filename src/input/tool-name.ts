import { z } from 'zod';

/**
 * A tool name as agents name them: whatever MCP servers (`namespace/tool.name`), OpenAPI
 * operationIds (`Get_Hotel_Reviews(Tips)`) and function-calling APIs (`a:b`) use — printable,
 * 1–128 characters, no whitespace and no control or other invisible characters. One definition
 * for the run report, the skill validator's `required-tools` rule and session tool lists; a
 * skill's `metadata.required-tools` is a space-separated list, which this keeps unambiguous.
 */
export const TOOL_NAME_MAX_CHARACTERS = 128;

/** Whitespace, controls, format characters (zero-width and direction marks), surrogates, private use, unassigned. */
const NOT_PRINTABLE = /[\s\p{C}\p{Z}]/u;

/** A refused value in an error message: JSON-quoted (so invisible characters show as escapes), cut at 200 characters. */
export function quoteRefused(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Why `value` is not a tool name, or null when it is one. The reason quotes the value. */
export function toolNameProblem(value: string): string | null {
  const characters = [...value].length;
  if (characters === 0) return 'a tool name is 1 to 128 printable characters; got an empty string';
  if (characters > TOOL_NAME_MAX_CHARACTERS) {
    return `a tool name is at most ${TOOL_NAME_MAX_CHARACTERS} characters; got ${characters}: ${quoteRefused(value)}`;
  }
  const offending = NOT_PRINTABLE.exec(value);
  if (offending) {
    const codePoint = `U+${offending[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return `a tool name has no whitespace or control characters; ${quoteRefused(value)} has ${codePoint} at index ${offending.index}`;
  }
  return null;
}

export const toolNameSchema = z.string().superRefine((value, context) => {
  const problem = toolNameProblem(value);
  if (problem !== null) context.addIssue({ code: 'custom', message: problem });
});
