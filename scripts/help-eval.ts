/**
 * npm run help:eval -- <set.json> [--postgres] [--all] [--unseen]: grades ask_help on a held-out set (issue #26)
 * against a whole marketplace started in this process (PGlite, or a fresh database of
 * TEST_DATABASE_URL with --postgres), each account-style question asked by a caller whose account
 * is built for real. Prints the score by style and the worst answers (--all: every wrong one).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HeldoutEntry } from '../services/support/test/heldout/grader';

// The testkit defines jest's describe variants at load; outside jest they are never called.
const g = globalThis as Record<string, unknown>;
g.describe ??= Object.assign(() => undefined, { skip: () => undefined });

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: npm run help:eval -- <set.json> [--postgres] [--all]');
  const entries = JSON.parse(fs.readFileSync(file, 'utf8')) as HeldoutEntry[];
  // --unseen: the learned next call is trained without this set's own questions (leave-one-set-out).
  if (args.includes('--unseen')) (await import('../services/support/help-learned')).excludeLabelledSets([path.basename(file, '.json')]);
  const { startTestApp } = await import('../test/kit');
  const { gradeSet, report } = await import('../services/support/test/heldout/grader');
  const app = await startTestApp({ postgres: args.includes('--postgres') });
  try {
    const graded = await gradeSet(app, entries);
    console.log(report(graded, args.includes('--all') ? graded.length : 10));
    if (args.includes('--json')) fs.writeFileSync(`${file}.graded.json`, JSON.stringify(graded, null, 1));
  } finally {
    await app.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
