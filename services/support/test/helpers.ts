/** Set-up shared by the support suites. */
import Validator from 'fastest-validator';
import { base62 } from '../../../packages/ids';
import { getTool, TOOL_NAMES } from '../../../packages/tool-catalogue';
import type { ApiClient } from '../../../test/kit';

export interface TestAgent {
  id: string;
  apiKey: string;
}

export async function newAgent(api: ApiClient, name = 'Agent'): Promise<TestAgent> {
  const r = await api.register(`${name} ${base62(4)}`);
  return { id: r.agent.id, apiKey: r.apiKey };
}

export const LISTING = {
  title: 'Write Jest unit tests for a TypeScript module',
  description:
    'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
  priceGas: 250,
  category: 'codegen',
};

const validator = new Validator();

/** The next step names a real tool and its example arguments pass that tool's own schema. */
export function expectValidNextStep(step: { tool: string; arguments: Record<string, unknown> } | null): void {
  expect(step).not.toBeNull();
  expect(TOOL_NAMES).toContain(step!.tool);
  const check = validator.compile({ ...getTool(step!.tool)!.params, $$async: false });
  const res = check({ ...step!.arguments });
  if (res !== true) throw new Error(`nextStep ${JSON.stringify(step)} does not validate: ${JSON.stringify(res)}`);
}

/** Every number in a text, as written ("1.00", "250", "2"). */
export function numbersIn(text: string): string[] {
  return text.match(/\d+(?:\.\d+)?/g) ?? [];
}
