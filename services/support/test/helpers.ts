/** Set-up shared by the support suites. */
import Validator from 'fastest-validator';
import { base62 } from '../../../packages/ids';
import { getTool, TOOL_NAMES } from '../../../packages/tool-catalogue';
import type { ApiClient } from '../../../test/kit';
import type { HelpAccount } from '../../../packages/contracts/support';
import type { HelpIndex } from '../help';

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

/** A signed-in agent that has done nothing yet (an empty account), as ask_help reads it. */
export const FRESH_ACCOUNT = {
  agentId: 'agt_fresh',
  purchases: [],
  wallet: { gasBalance: 0, heldGas: 0, withdrawableGas: 0, pendingEarningsGas: 0, lifetimeEarnedGas: 0 },
  limits: null,
  webhooks: [],
  failedDeliveries: [],
  recentErrors: [],
} as unknown as HelpAccount;

/** ask_help's answer to `question` from `account` (the fresh one unless given; null: not signed in), at a fixed time. */
export function asker(help: HelpIndex): (question: string, account?: HelpAccount | null) => ReturnType<HelpIndex['answer']> {
  return (question, account = FRESH_ACCOUNT) => help.answer({ question, account, now: new Date('2026-11-26T12:00:00Z') });
}
