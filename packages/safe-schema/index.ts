/**
 * Ajv for seller-supplied JSON Schemas (a listing's deliverableSchema). Every regex such a schema
 * carries (`pattern`, `patternProperties`) is compiled by RE2JS, a linear-time engine, never by
 * V8's backtracking RegExp: `^(a+)+$` against a long string costs microseconds, not minutes.
 * A pattern RE2 cannot run (backreferences, lookaround) fails to compile, so the listing is refused.
 * `format` is not evaluated (no format regexes run at all).
 */
import Ajv, { type Options } from 'ajv';
import { RE2JS } from 're2js';

function re2RegExp(pattern: string, flags: string): { test(s: string): boolean } {
  // Ajv passes "u" (unicode); RE2 is always Unicode-aware, so flags other than i/m/s are irrelevant.
  let f = 0;
  if (flags.includes('i')) f |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) f |= RE2JS.MULTILINE;
  if (flags.includes('s')) f |= RE2JS.DOTALL;
  const re = RE2JS.compile(pattern, f);
  // test(): unanchored search on RE2's DFA (no capture bookkeeping), like RegExp.prototype.test.
  return { test: (s: string) => re.test(s) };
}
// Ajv's standalone code generation would need this; we never generate standalone code.
re2RegExp.code = 'require("re2js").RE2JS';

export function createSchemaAjv(opts: Options = {}): Ajv {
  return new Ajv({ strict: false, allErrors: true, validateFormats: false, ...opts, code: { ...opts.code, regExp: re2RegExp } });
}
