import { types } from 'node:util';
import { isValidSubject } from '../../policy/policy-name';
import { RunnerError } from '../../runner/runner.errors';
import { isPlainObject } from '../../shared/options/plain-object';

/** Why a tool of the set was refused (`details.reason`). */
export type ToolRefusal = 'invalid_tool_name' | 'invalid_tool' | 'missing_execute';

/** A tool's own data properties, copied: the guarded tool keeps all of them. */
export type ToolProperties = Readonly<Record<string, unknown>>;

/** The hooks a tool may have and what each must be. */
const HOOKS: Readonly<Record<string, (value: unknown) => boolean>> = {
  execute: (value) => typeof value === 'function',
  needsApproval: (value) => typeof value === 'boolean' || typeof value === 'function',
  onInputAvailable: (value) => typeof value === 'function',
  toModelOutput: (value) => typeof value === 'function',
};

const refuse = (index: number, reason: ToolRefusal) => new RunnerError('invalid_runner_options', { field: 'tools', index, reason });

/**
 * Reads a tool set: a plain object (not a Proxy) whose own keys are enumerable data properties named
 * by the policy's subject rule (1..256 UTF-8 bytes, well-formed, no control characters), each a plain
 * object of own data properties with an `execute` function. Accessors are refused, so no getter can
 * hand the SDK another `execute` after the guard was applied. `details` name the tool by its position,
 * never by its name. No code of the set runs.
 */
export function readToolSet(tools: unknown): ReadonlyArray<readonly [string, ToolProperties]> {
  if (!isOwnDataObject(tools)) throw new RunnerError('invalid_runner_options', { field: 'tools' });
  const entries: Array<readonly [string, ToolProperties]> = [];
  Reflect.ownKeys(tools).forEach((key, index) => {
    if (typeof key !== 'string' || !isValidSubject(key)) throw refuse(index, 'invalid_tool_name');
    const descriptor = Object.getOwnPropertyDescriptor(tools, key) as PropertyDescriptor;
    if (!('value' in descriptor) || descriptor.enumerable !== true) throw refuse(index, 'invalid_tool');
    entries.push([key, readTool(descriptor.value, index)]);
  });
  return entries;
}

function readTool(tool: unknown, index: number): ToolProperties {
  if (!isOwnDataObject(tool)) throw refuse(index, 'invalid_tool');
  const properties: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(tool)) {
    const descriptor = Object.getOwnPropertyDescriptor(tool, key) as PropertyDescriptor;
    if (!('value' in descriptor)) throw refuse(index, 'invalid_tool');
    Object.defineProperty(properties, key, { value: descriptor.value, enumerable: descriptor.enumerable, writable: true, configurable: true });
  }
  if (properties.execute === undefined) throw refuse(index, 'missing_execute');
  for (const [hook, isValid] of Object.entries(HOOKS)) {
    if (properties[hook] !== undefined && !isValid(properties[hook])) throw refuse(index, 'invalid_tool');
  }
  return properties;
}

function isOwnDataObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !types.isProxy(value) && isPlainObject(value);
}
