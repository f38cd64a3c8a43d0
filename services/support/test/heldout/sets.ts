/** The evaluation sets of this folder (each <name>.json; not a grader's *.graded.json output), read. */
import fs from 'node:fs';
import path from 'node:path';
import type { HeldoutEntry } from './grader';

export function tuningSets(): Array<{ name: string; entries: HeldoutEntry[] }> {
  return fs
    .readdirSync(__dirname)
    .filter((f) => /^[\w-]+\.json$/.test(f) && !f.includes('graded'))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), entries: JSON.parse(fs.readFileSync(path.join(__dirname, f), 'utf8')) as HeldoutEntry[] }));
}
