/**
 * The documentation's links and commands are real: every relative link in README.md and docs/**\/*.md
 * reaches a file (and, with a #fragment into a markdown file, one of its headings), and every
 * `npm run <script>` the docs name is a script of package.json; the lists of values the docs spell out match the
 * code they come from. No server needed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WALLET_ENTRY_TYPES } from '../../packages/contracts/ledger';
import { MONEY_LEGS } from '../../services/ledger/legs';
import { MIN_PRICE_GAS } from '../../packages/market-rules';
import { PURCHASE_STATUSES, purchaseTask } from '../../packages/contracts/purchase-machine';

const REPO_ROOT = path.resolve(__dirname, '../..');

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

const DOCS = [path.join(REPO_ROOT, 'README.md'), ...markdownFiles(path.join(REPO_ROOT, 'docs'))];

/** The text outside fenced code blocks (links there are prose; code blocks hold commands and output). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const text = prose(fs.readFileSync(file, 'utf8'));
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    links.push({ file, target });
  }
  return links;
}

const rel = (file: string) => path.relative(REPO_ROOT, file);

describe('documentation', () => {
  const links = DOCS.flatMap(relativeLinks);

  it('finds the documents and their links', () => {
    expect(DOCS.map(rel)).toEqual(expect.arrayContaining(['README.md', 'docs/agents.md', 'docs/operations.md', 'docs/testing.md', 'docs/adr/README.md']));
    expect(links.length).toBeGreaterThan(50);
  });

  it('every relative link reaches a file, and every #anchor a heading of it', () => {
    const broken: string[] = [];
    for (const { file, target } of links) {
      const [pathPart, fragment] = target.split('#', 2);
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (!fs.existsSync(resolved)) {
        broken.push(`${rel(file)}: ${target} (no such file)`);
        continue;
      }
      if (fragment !== undefined && resolved.endsWith('.md')) {
        const anchors = headingAnchors(fs.readFileSync(resolved, 'utf8'));
        if (!anchors.has(decodeURIComponent(fragment))) broken.push(`${rel(file)}: ${target} (no heading #${fragment} in ${rel(resolved)})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every `npm run <script>` the docs name is a script of package.json', () => {
    const scripts = Object.keys(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts);
    const missing: string[] = [];
    for (const file of DOCS) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/npm run ([a-z][\w:.-]*)/g)) {
        const name = m[1].replace(/[.:]+$/, '');
        if (!scripts.includes(name)) missing.push(`${rel(file)}: npm run ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("the wallet's entry types in docs/agents.md are those the ledger posts to an agent's account", () => {
    const posted = new Set(Object.values(MONEY_LEGS).flatMap((legs) => legs.filter((l) => 'agent' in l.account).map((l) => l.entry)));
    expect([...posted].sort()).toEqual([...WALLET_ENTRY_TYPES].sort());
    const listed = /with types `([a-z_, ]+)`/.exec(fs.readFileSync(path.join(REPO_ROOT, 'docs/agents.md'), 'utf8'));
    expect(listed?.[1].split(', ').sort()).toEqual([...WALLET_ENTRY_TYPES].sort());
  });

  it("docs/agents.md's table of purchases as MCP tasks is the purchase machine's (status and poll interval, before and after a delivery)", () => {
    const text = fs.readFileSync(path.join(REPO_ROOT, 'docs/agents.md'), 'utf8');
    const rows = new Map([...text.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1], [m[2].trim(), m[3].trim()]]));
    expect([...rows.keys()].sort()).toEqual([...PURCHASE_STATUSES].sort());
    const cell = (t: { status: string; pollIntervalMs?: number }) => (t.pollIntervalMs ? `${t.status}, ${t.pollIntervalMs / 1000} s` : t.status);
    for (const status of PURCHASE_STATUSES) {
      const [before, after] = rows.get(status)!;
      // '—': the state does not occur on that side of a delivery.
      if (before !== '—') expect({ status, before }).toEqual({ status, before: cell(purchaseTask(status, { delivered: false, verdict: null })) });
      if (after !== '—') expect({ status, after }).toEqual({ status, after: cell(purchaseTask(status, { delivered: true, verdict: null })) });
    }
    expect(purchaseTask('refunded', { delivered: true, verdict: 'reject' }).status).toBe('failed');
    expect(text).toMatch(/rejected → `failed`/);
  });

  it('docs/agents.md gives the minimum evaluator fee as market-rules has it', () => {
    expect(fs.readFileSync(path.join(REPO_ROOT, 'docs/agents.md'), 'utf8')).toContain(`fee at least ${MIN_PRICE_GAS} gas, the minimum price`);
  });

  it('headings are anchored as GitHub does', () => {
    const anchors = headingAnchors('## Distributed on one machine: `npm run cluster`\n## Cash-out (sellers)\n## Cash-out (sellers)\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['distributed-on-one-machine-npm-run-cluster', 'cash-out-sellers', 'cash-out-sellers-1']);
  });
});
