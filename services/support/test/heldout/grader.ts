/**
 * The held-out grader of ask_help (issue #26). Each question of a set (written blind, see README.md)
 * is asked through the real tool router of a whole marketplace (in-process, PGlite or PostgreSQL),
 * as a caller whose account is built for real from the question's `setup`: registered agents, a
 * listing, gas credited through the ledger, a purchase, a delivery, a dispute, limits set by the
 * owner. Then `expect` is checked:
 *   nextStep         the suggested tool is one of these
 *   mentions         every group has one alternative in the answer (case-insensitive substring)
 *   decline          the answer refuses (declined: true) and does not suggest report_bug
 *   notReportBug     the suggested tool is not report_bug
 *   mentionsAccount  the answer cites the caller's own account: an id of its purchases, its limit,
 *                    or (setup none) that it has none — and lookedAt says what was read
 * Used by scripts/help-eval.ts (npm run help:eval -- <set.json>) and heldout.test.ts.
 */
import { creditGas } from '../../../../test/kit/ledger';
import type { TestApp } from '../../../../test/kit';
import { ESCROW } from '../../../../packages/contracts/escrow';

export type Style = 'short' | 'midtask' | 'error' | 'rules' | 'decline' | 'account';
export type Setup = 'buyer_delivered' | 'buyer_pending' | 'seller_pending' | 'seller_disputed' | 'buyer_limits' | 'none';

export interface HeldoutEntry {
  id: string;
  style: Style;
  question: string;
  setup?: Setup;
  expect: {
    nextStep?: string[];
    mentions?: string[][];
    decline?: boolean;
    notReportBug?: boolean;
    mentionsAccount?: boolean;
  };
}

export interface Graded {
  entry: HeldoutEntry;
  ok: boolean;
  /** Why it is wrong (empty when ok). */
  failures: string[];
  answer: any;
}

const LISTING = {
  title: 'Write Jest unit tests for a TypeScript module',
  description:
    'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
  priceGas: 250,
  category: 'codegen',
};

let counter = 0;

async function register(app: TestApp, name: string): Promise<{ id: string; apiKey: string }> {
  const r = await app.api.register(`${name} ${++counter}`);
  return { id: r.agent.id, apiKey: r.apiKey };
}

/** The caller of a question, with its account built for real; `facts` are what a grounded answer can cite. */
export async function buildSetup(app: TestApp, setup: Setup | undefined): Promise<{ apiKey: string; facts: string[] }> {
  const me = await register(app, 'Asker');
  if (!setup || setup === 'none') return { apiKey: me.apiKey, facts: [] };
  if (setup === 'buyer_limits') {
    await creditGas(app, me.id, 2000, 'builder');
    await app.call(ESCROW.setLimits, { agentId: me.id, limits: { perPurchaseMaxGas: 500 } });
    return { apiKey: me.apiKey, facts: ['500'] };
  }
  const other = await register(app, 'Counterparty');
  const [buyer, seller] = setup.startsWith('buyer') ? [me, other] : [other, me];
  const { listing } = await app.api.ok('list_service', LISTING, seller.apiKey);
  await creditGas(app, buyer.id, 500);
  const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id, requirements: 'src/parser.ts', maxPriceGas: LISTING.priceGas }, buyer.apiKey, {
    'idempotency-key': `setup-${counter}`,
  });
  if (setup === 'buyer_delivered' || setup === 'seller_disputed') {
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Added 14 Jest tests for parser.ts; coverage summary attached.' } }, seller.apiKey);
  }
  if (setup === 'seller_disputed') {
    await app.api.ok('dispute_purchase', { purchaseId: purchase.id, reason: 'The tests do not run: half of them import files that do not exist.' }, buyer.apiKey);
  }
  return { apiKey: me.apiKey, facts: [purchase.id] };
}

function declines(a: any): boolean {
  return a.declined === true;
}

export function judgeAnswer(entry: HeldoutEntry, a: any, facts: string[]): string[] {
  const failures: string[] = [];
  const x = entry.expect;
  const text = String(a.answer ?? '').toLowerCase();
  const tool: string | null = a.nextStep?.tool ?? null;
  if (x.nextStep && !(tool && x.nextStep.includes(tool))) failures.push(`nextStep ${tool ?? 'null'}, expected one of ${x.nextStep.join('/')}`);
  for (const group of x.mentions ?? []) {
    if (!group.some((alt) => text.includes(alt.toLowerCase()))) failures.push(`mentions none of [${group.join(' | ')}]`);
  }
  if (x.decline && !declines(a)) failures.push('did not decline');
  if ((x.decline || x.notReportBug) && tool === 'report_bug') failures.push('suggests report_bug');
  if (x.mentionsAccount) {
    const looked = Array.isArray(a.lookedAt) ? a.lookedAt : [];
    if (!looked.length) failures.push('lookedAt is empty');
    if (facts.length) {
      if (!facts.some((f) => text.includes(f.toLowerCase()))) failures.push(`does not cite the account (${facts.join(', ')})`);
    } else if (!/\byou have no\b|\byou have not\b|\byou haven't\b|\bnone\b|\bno (?:purchases|orders|sales|webhooks?)\b|\byour \w+ is 0\b/.test(text)) {
      failures.push('does not say the account has none');
    }
  }
  return failures;
}

export async function gradeSet(app: TestApp, entries: HeldoutEntry[]): Promise<Graded[]> {
  const out: Graded[] = [];
  for (const entry of entries) {
    const { apiKey, facts } = await buildSetup(app, entry.style === 'account' ? (entry.setup ?? 'none') : undefined);
    const r = await app.api.call('ask_help', { question: entry.question }, apiKey);
    const a = r.body.ok ? r.body.result : { answer: `HTTP ${r.status} ${JSON.stringify(r.body.error)}`, nextStep: null };
    const failures = r.body.ok ? judgeAnswer(entry, a, facts) : [`ask_help failed: HTTP ${r.status}`];
    out.push({ entry, ok: failures.length === 0, failures, answer: a });
  }
  return out;
}

/** Score by style, then the worst answers (every wrong one, most failures first, up to `worst`). */
export function report(graded: Graded[], worst = 10): string {
  const lines: string[] = [];
  const styles = [...new Set(graded.map((g) => g.entry.style))];
  const total = graded.filter((g) => g.ok).length;
  lines.push(`ask_help held-out grade: ${total}/${graded.length} = ${((100 * total) / graded.length).toFixed(1)} %`);
  for (const s of styles) {
    const of = graded.filter((g) => g.entry.style === s);
    lines.push(`  ${s.padEnd(8)} ${of.filter((g) => g.ok).length}/${of.length}`);
  }
  const wrong = graded.filter((g) => !g.ok).sort((a, b) => b.failures.length - a.failures.length).slice(0, worst);
  if (wrong.length) lines.push('', `Worst ${wrong.length}:`);
  for (const g of wrong) {
    const first = String(g.answer.answer ?? '').split('\n').filter(Boolean).slice(0, 3).join(' / ');
    lines.push(
      `- ${g.entry.id} [${g.entry.style}${g.entry.setup ? ` ${g.entry.setup}` : ''}] ${JSON.stringify(g.entry.question)}`,
      `    answer: ${first.slice(0, 400)}`,
      `    nextStep: ${g.answer.nextStep ? JSON.stringify(g.answer.nextStep) : 'null'}`,
      `    wrong: ${g.failures.join('; ')}`,
    );
  }
  return lines.join('\n');
}
