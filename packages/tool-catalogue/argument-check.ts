/**
 * The catalogue's own check of a call's arguments against its schema (fastest-validator, every error at once): the
 * gateway runs it on each call, ask_help on the arguments a question quotes beside a refusal. One compiled check per tool.
 */
import Validator, { type SyncCheckFunction } from 'fastest-validator';
import { simplifyValidationErrors, type FieldError } from '../errors';
import type { ToolDefinition } from './index';

const validator = new Validator({ haltOnFirstError: false });
const checks = new Map<string, SyncCheckFunction>();

/** `tool`'s schema errors for `args` (none: they pass); `only` checks those arguments alone (a call quoted in part). */
export function argumentErrors(tool: ToolDefinition, args: Record<string, unknown>, only?: readonly string[]): FieldError[] {
  const params = only ? Object.fromEntries(Object.entries(tool.params).filter(([k]) => only.includes(k))) : tool.params;
  let check = only ? undefined : checks.get(tool.name);
  if (!check) {
    // $$async: false compiles a synchronous check (its answer is true or the errors, never a promise).
    check = validator.compile({ ...params, $$async: false }) as SyncCheckFunction;
    if (!only) checks.set(tool.name, check);
  }
  const res = check(args);
  return res === true ? [] : simplifyValidationErrors(res);
}
