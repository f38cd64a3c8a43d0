/**
 * npm run help:examples: gathers every labelled question of the tuning sets
 * (services/support/test/heldout/*.json — questions with the next calls an expert accepts) and of the
 * support service's own tests into
 * packages/knowledge/labelled-questions.json, which ask_help's learned next call reads (help-learned.ts).
 * A set that is still held out must not be in that folder when this runs: it would be learned from.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LabelledQuestion } from '../services/support/help-learned';
import { tuningSets } from '../services/support/test/heldout/sets';

const OUT = path.join(__dirname, '../packages/knowledge/labelled-questions.json');

const sets = tuningSets();
const out: LabelledQuestion[] = [];
for (const { name, entries } of sets) {
  for (const e of entries) {
    if (!e.expect.nextStep?.length) continue;
    out.push({ set: name, q: e.question, ...(e.setup && e.setup !== 'none' ? { setup: e.setup } : {}), next: e.expect.nextStep });
  }
}
// The labelled questions of the support service's own tests (`['tool', 'question']`, `['tool', ['accepted', …], 'question']`,
// `{ q: 'question', …, next: 'tool' }`): written for earlier rounds, they are tuning questions too.
const TESTS = path.join(__dirname, '../services/support/test');
const STRING = String.raw`'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"`;
const PAIR = new RegExp(String.raw`^\s*\['([a-z_]+)', (?:\[([^\]]*)\], )?(?:${STRING})\],?\s*(?://.*)?$`, 'gm');
const CASE = new RegExp(String.raw`\{ q: (?:${STRING}),[^\n]*\bnext: '([a-z_]+)'`, 'g');
const unquote = (x: string) => x.replace(/\\(.)/g, '$1');
for (const f of fs.readdirSync(TESTS).filter((x) => x.endsWith('.test.ts')).sort()) {
  const src = fs.readFileSync(path.join(TESTS, f), 'utf8');
  const set = `test:${f.replace(/\.test\.ts$/, '')}`;
  for (const m of src.matchAll(PAIR)) {
    const accepted = m[2] ? [...m[2].matchAll(/'([a-z_]+)'/g)].map((x) => x[1]) : [m[1]];
    out.push({ set, q: unquote(m[3] ?? m[4]), next: accepted });
  }
  for (const m of src.matchAll(CASE)) out.push({ set, q: unquote(m[1] ?? m[2]), next: [m[3]] });
}
fs.writeFileSync(OUT, `[\n${out.map((x) => JSON.stringify(x)).join(',\n')}\n]\n`);
console.log(`${out.length} labelled questions from ${sets.length} sets → ${path.relative(process.cwd(), OUT)}`);
