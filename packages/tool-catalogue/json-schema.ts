/**
 * fastest-validator schema → JSON Schema (draft 2020-12 subset), for discovery, MCP and OpenAPI.
 * Covers the rule types the catalogue uses; an unknown type fails loudly so nothing drifts silently.
 */
export type JsonSchema = Record<string, any>;

function convertRule(rule: any): { schema: JsonSchema; optional: boolean } {
  if (typeof rule === 'string') rule = { type: rule };
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
      schema.anyOf = (rule.rules as any[]).map((r) => convertRule(r).schema);
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
export function toJsonSchema(params: Record<string, any>, opts: { additionalProperties?: boolean } = {}): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, rule] of Object.entries(params)) {
    if (name.startsWith('$$')) continue;
    const { schema, optional } = convertRule(rule);
    properties[name] = schema;
    if (!optional) required.push(name);
  }
  const out: JsonSchema = { type: 'object', properties, additionalProperties: opts.additionalProperties ?? false };
  if (required.length) out.required = required;
  return out;
}
