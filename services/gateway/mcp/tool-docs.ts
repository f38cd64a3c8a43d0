/** Per-tool reference text, generated from the tool catalogue (MCP resources, the /docs page). */
import { toolAnnotations, toolInputSchema, type JsonSchema, type ToolDefinition } from '../../../packages/tool-catalogue';

export function schemaType(s: JsonSchema): string {
  if (s.enum) return (s.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  if (s.anyOf) return (s.anyOf as JsonSchema[]).map(schemaType).join(' or ');
  return String(s.type ?? 'any');
}

export function schemaLimits(s: JsonSchema): string {
  const out: string[] = [];
  if (s.minLength !== undefined) out.push(`min length ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`max length ${s.maxLength}`);
  if (s.minimum !== undefined) out.push(`>= ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`<= ${s.maximum}`);
  if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
  return out.join(', ');
}

export interface ArgumentRow {
  name: string;
  type: string;
  required: boolean;
  notes: string;
}

export function argumentRows(tool: ToolDefinition, withIdempotencyKey: boolean): ArgumentRow[] {
  const schema = toolInputSchema(tool, { withIdempotencyKey });
  const required = new Set<string>(schema.required ?? []);
  return Object.entries<JsonSchema>(schema.properties ?? {}).map(([name, s]) => ({
    name,
    type: schemaType(s),
    required: required.has(name),
    notes: [s.description, schemaLimits(s)].filter(Boolean).join(' '),
  }));
}

/** Markdown for one tool: what it does, auth, module, annotations, arguments. */
export function toolMarkdown(tool: ToolDefinition, baseUrl: string): string {
  const a = toolAnnotations(tool);
  const rows = argumentRows(tool, true);
  const lines = [
    `# ${tool.name} — ${tool.title}`,
    '',
    tool.description,
    '',
    `- Module: ${tool.module}`,
    `- API key needed: ${tool.auth ? 'yes (Authorization: Bearer rk_live_…)' : 'no'}`,
    `- Read-only: ${a.readOnlyHint ? 'yes' : 'no'}; moves gas: ${tool.movesMoney ? 'yes' : 'no'}`,
    ...(tool.mutating ? ['- Retry safely with `idempotencyKey` (MCP) or the `Idempotency-Key` header (HTTP).'] : []),
    ...(tool.aliasOf ? [`- Alias of ${tool.aliasOf}.`] : []),
    '',
    '## Arguments',
    '',
  ];
  if (rows.length === 0) lines.push('None.');
  else {
    lines.push('| name | type | required | notes |', '|---|---|---|---|');
    for (const r of rows) lines.push(`| ${r.name} | ${r.type.replace(/\|/g, '\\|')} | ${r.required ? 'yes' : 'no'} | ${r.notes.replace(/\|/g, '\\|')} |`);
  }
  lines.push(
    '',
    '## Call it',
    '',
    'MCP: `tools/call` with this name and the arguments above.',
    '',
    'HTTP:',
    '',
    '```sh',
    `curl -s ${baseUrl}/api/agent -H 'content-type: application/json'${tool.auth ? " -H 'authorization: Bearer rk_live_…'" : ''} \\`,
    `  -d '{"tool":"${tool.name}","arguments":{}}'`,
    '```',
    '',
    'Success: `{"ok": true, "result": {…}}`. Failure: `{"ok": false, "error": {"code", "message", "hint"}, "requestId"}`.',
    '',
  );
  return lines.join('\n');
}
