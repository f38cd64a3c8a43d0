/**
 * fastest-validator schema → JSON Schema (draft 2020-12 subset), for discovery, MCP and OpenAPI.
 * Covers the rule types the catalogue uses; an unknown type fails loudly so nothing drifts silently.
 */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: readonly unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  pattern?: string;
  format?: string;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  /** Other keywords (discriminator, examples, x-… extensions) pass through. */
  [keyword: string]: unknown;
}

/** An object schema: what toJsonSchema and the result builders make. */
export type ObjectJsonSchema = JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };

/** One fastest-validator rule as the catalogue writes it: the keywords read here, and the others it passes on to the validator. */
export interface ParamRule {
  type: string;
  optional?: boolean;
  default?: unknown;
  description?: string;
  min?: number;
  max?: number;
  pattern?: RegExp | string;
  enum?: readonly unknown[];
  integer?: boolean;
  positive?: boolean;
  values?: readonly unknown[];
  props?: ParamSchema;
  strict?: boolean;
  items?: ParamRule | string;
  rules?: ReadonlyArray<ParamRule | string>;
  [keyword: string]: unknown;
}

/** A fastest-validator params map (Moleculer's action `params`); `$$` keys are the validator's options. */
export type ParamSchema = Record<string, ParamRule | string | boolean>;

function convertRule(given: ParamRule | string | boolean): { schema: JsonSchema; optional: boolean } {
  if (typeof given === 'boolean') throw new Error('json-schema: a rule must be a type name or an object');
  const rule: ParamRule = typeof given === 'string' ? { type: given } : given;
  const optional = rule.optional === true || rule.default !== undefined;
  const schema: JsonSchema = {};
  switch (rule.type) {
    case 'string':
      schema.type = 'string';
      if (rule.min !== undefined) schema.minLength = rule.min;
      if (rule.max !== undefined) schema.maxLength = rule.max;
      if (rule.pattern) schema.pattern = String(rule.pattern instanceof RegExp ? rule.pattern.source : rule.pattern);
      if (rule.enum) schema.enum = rule.enum;
      break;
    case 'number':
      schema.type = rule.integer ? 'integer' : 'number';
      if (rule.min !== undefined) schema.minimum = rule.min;
      if (rule.max !== undefined) schema.maximum = rule.max;
      if (rule.positive) schema.exclusiveMinimum = 0;
      break;
    case 'boolean':
      schema.type = 'boolean';
      break;
    case 'enum':
      schema.type = 'string';
      schema.enum = rule.values;
      break;
    case 'object': {
      schema.type = 'object';
      // Nested objects are open (a delivery carries anything besides its summary) unless the rule is strict.
      if (rule.props) Object.assign(schema, toJsonSchema(rule.props, { additionalProperties: rule.strict === true ? false : true }));
      else schema.additionalProperties = true;
      break;
    }
    case 'array':
      schema.type = 'array';
      if (rule.items) schema.items = convertRule(rule.items).schema;
      if (rule.min !== undefined) schema.minItems = rule.min;
      if (rule.max !== undefined) schema.maxItems = rule.max;
      break;
    case 'multi':
      schema.anyOf = (rule.rules ?? []).map((r) => convertRule(r).schema);
      break;
    case 'any':
      break;
    default:
      throw new Error(`json-schema: unsupported fastest-validator type "${rule.type}"`);
  }
  if (rule.default !== undefined) schema.default = rule.default;
  if (rule.description) schema.description = rule.description;
  return { schema, optional };
}

/** An object schema from a params map; a tool's arguments are strict (DESIGN §5): no other names. */
export function toJsonSchema(params: ParamSchema, opts: { additionalProperties?: boolean } = {}): ObjectJsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, rule] of Object.entries(params)) {
    if (name.startsWith('$$')) continue;
    const { schema, optional } = convertRule(rule);
    properties[name] = schema;
    if (!optional) required.push(name);
  }
  const out: ObjectJsonSchema = { type: 'object', properties, additionalProperties: opts.additionalProperties ?? false };
  if (required.length) out.required = required;
  return out;
}
