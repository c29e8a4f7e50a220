import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { JsonObject, JsonValue } from '../content.types';

/** Where and why arguments failed a schema: JSON-pointer paths and keywords, never values. */
export interface ArgumentIssue {
  readonly path: string;
  readonly keyword: string;
}

/** Checks one tool's arguments; `null` when they pass. */
export type ArgumentValidator = (args: JsonObject) => readonly ArgumentIssue[] | null;

const MAX_ISSUES = 16;

// strict, no coercion, no defaults, no removal: arguments are validated, never changed
const ajv = new Ajv2020({ strict: true, allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, validateFormats: false });

/**
 * Compiles a tool's JSON Schema (draft 2020-12) once. A schema Ajv refuses throws (the caller turns it
 * into `invalid_runner_options`); the schema must describe an object.
 */
export function compileArgumentSchema(schema: JsonObject | undefined): ArgumentValidator | null {
  if (schema === undefined) return null;
  const validate: ValidateFunction = ajv.compile(schema as object);
  return (args) => (validate(args) ? null : issuesOf(validate.errors ?? []));
}

function issuesOf(errors: readonly ErrorObject[]): readonly ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  for (const error of errors.slice(0, MAX_ISSUES)) {
    // a missing or unexpected property is named by the schema, not by the value: safe to point at
    const property = error.keyword === 'required' ? error.params.missingProperty : error.keyword === 'additionalProperties' ? error.params.additionalProperty : undefined;
    const path = typeof property === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(property) ? `${error.instancePath}/${property}` : error.instancePath;
    issues.push(Object.freeze({ path: safePath(path), keyword: error.keyword }));
  }
  return Object.freeze(issues);
}

/** Keys in a path come from the arguments: only plain identifier-like segments are kept. */
function safePath(path: string): string {
  return path
    .split('/')
    .map((segment, index) => (index === 0 || /^[A-Za-z0-9_-]{1,64}$/.test(segment) ? segment : '*'))
    .join('/');
}

/** The model-visible answer to arguments that are not a plain object or fail the schema. */
export function invalidArgumentsResponse(issues: readonly ArgumentIssue[]): JsonValue {
  return { success: false, error: { kind: 'invalid_tool_arguments', issues: issues.map((issue) => ({ ...issue })) } };
}

/** The issue list of arguments that are not a plain JSON object. */
export const NOT_AN_OBJECT: readonly ArgumentIssue[] = Object.freeze([Object.freeze({ path: '', keyword: 'type' })]);
