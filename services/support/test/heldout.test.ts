/**
 * The held-out sets of issue #26, kept as written (frozen: FROZEN records their sha256). set-A is the
 * tuning set and is graded here on every run, each account-style question asked by a caller whose
 * account is built for real (grader.ts); set-B was graded once, at the end (heldout/README.md; docs/adr/0026-ask-help-design.md), and is
 * only checked for being unchanged; set-C (round 2) likewise was graded once with npm run help:eval
 * (set-C.result.txt) and is only checked here, never graded in the test run. own-1.json and own-2.json are tuning sets written by the
 * implementer (not blind) after set-A, to check fixes on questions set-A does not have. A new
 * held-out set is graded with npm run help:eval -- <set.json>.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../../test/kit';
import { gradeSet, report, type HeldoutEntry } from './heldout/grader';

const dir = path.join(__dirname, 'heldout');
const read = (name: string) => fs.readFileSync(path.join(dir, name));

describe('ask_help held-out sets', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('own-10.json (round 3, written from the spec before any change, graded once at the end) is the frozen one', () => {
    const sha = crypto.createHash('sha256').update(read('own-10.json')).digest('hex');
    expect(read('own-10.FROZEN').toString()).toContain(`${sha}  own-10.json`);
    expect(JSON.parse(read('own-10.json').toString())).toHaveLength(30);
  });

  test('the sets are the frozen ones, unchanged', () => {
    const frozen = read('FROZEN').toString();
    for (const name of ['set-A.json', 'set-B.json', 'set-C.json']) {
      const sha = crypto.createHash('sha256').update(read(name)).digest('hex');
      expect(frozen).toContain(`${sha}  ${name}`);
      const set = JSON.parse(read(name).toString()) as HeldoutEntry[];
      expect(set).toHaveLength(70);
    }
  });

  test('set-A (the tuning set): at least 90 % correct, every decline declined', async () => {
    const set = JSON.parse(read('set-A.json').toString()) as HeldoutEntry[];
    const graded = await gradeSet(app, set);
    console.log(report(graded));
    const declines = graded.filter((g) => g.entry.style === 'decline');
    expect(declines.filter((g) => g.ok).map((g) => g.entry.id)).toEqual(declines.map((g) => g.entry.id));
    expect(graded.filter((g) => g.ok).length / graded.length).toBeGreaterThanOrEqual(0.9);
  }, 120_000);

  test.each([['own-1.json'], ['own-2.json'], ['own-3.json'], ['own-4.json'], ['own-5.json'], ['own-6.json'], ['own-7.json'], ['own-8.json'], ['own-9.json'], ['own-10.json']])('%s (tuning, written by the implementer): at least 90 %% correct, every decline declined', async (name) => {
    const set = JSON.parse(read(name).toString()) as HeldoutEntry[];
    const graded = await gradeSet(app, set);
    console.log(`${name}\n${report(graded)}`);
    const declines = graded.filter((g) => g.entry.style === 'decline');
    expect(declines.filter((g) => g.ok).map((g) => g.entry.id)).toEqual(declines.map((g) => g.entry.id));
    expect(graded.filter((g) => g.ok).length / graded.length).toBeGreaterThanOrEqual(0.9);
  }, 120_000);
});
