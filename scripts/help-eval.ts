/**
 * npm run help:eval -- <set.json> [--out answers.json] [--postgres]: asks ask_help every question of a
 * set, each from a caller whose account is built for real from the question's `setup`
 * (scripts/help-setups.ts), on a whole marketplace started in this process (PGlite, or a fresh
 * database of TEST_DATABASE_URL with --postgres). Writes the answers (with the question, its style,
 * setup and the answer's length) for grading, and prints the length figures.
 */
import fs from 'node:fs';

// The testkit defines jest's describe variants at load; outside jest they are never called.
const g = globalThis as Record<string, unknown>;
g.describe ??= Object.assign(() => undefined, { skip: () => undefined });

interface Entry {
  id: string;
  style?: string;
  question: string;
  setup?: string;
  context?: Record<string, string>;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? args[outAt + 1] : null;
  const file = args.find((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1));
  if (!file) throw new Error('usage: npm run help:eval -- <set.json> [--out answers.json] [--postgres]');
  const entries = JSON.parse(fs.readFileSync(file, 'utf8')) as Entry[];
  const { startTestApp } = await import('../test/kit');
  const { buildSetup } = await import('./help-setups');
  const app = await startTestApp({ postgres: args.includes('--postgres') });
  const answers: unknown[] = [];
  try {
    for (const e of entries) {
      const who = await buildSetup(app, e.setup);
      const r = await app.api.call('ask_help', { question: e.question, ...(e.context ? { context: e.context } : {}) }, who.apiKey);
      const a = r.body.ok ? r.body.result : { answer: `HTTP ${r.status} ${JSON.stringify(r.body.error)}`, nextStep: null };
      answers.push({ id: e.id, style: e.style, setup: e.setup ?? 'none', question: e.question, length: String(a.answer).length, answer: a.answer, nextStep: a.nextStep, declined: a.declined ?? false });
      if (!out) console.log(`\n[${e.id} ${e.style ?? ''} ${e.setup ?? 'none'}] ${e.question}\n${a.answer}\nnextStep: ${JSON.stringify(a.nextStep)}`);
    }
  } finally {
    await app.stop();
  }
  if (out) fs.writeFileSync(out, JSON.stringify(answers, null, 1));
  const lengths = answers.map((a) => (a as { length: number }).length).sort((x, y) => x - y);
  console.log(`${answers.length} answers${out ? ` → ${out}` : ''}; median length ${lengths[Math.floor((lengths.length - 1) / 2)]}, longest ${lengths.at(-1)}, over 700: ${lengths.filter((n) => n > 700).length}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
