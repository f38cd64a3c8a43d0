/**
 * The call graph read from the source (issue #25), beside the runtime journey of call-graph.test.ts,
 * which only sees the calls its journey makes. Every non-test source file is parsed with the TypeScript
 * compiler and checked against the one table (layers.ts) and the contracts:
 * - imports: packages/ import no service (nor src/, scripts/, bench/); no service imports another's files;
 *   nothing under packages/, services/ or src/ imports a test folder or the test kit (test/kit);
 * - calls: a reference to another service's action constant (`LEDGER.hold`) is an edge caller → owner
 *   and a call of that action: each service's row of CALLS is exactly the actions its code names (the bus
 *   permissions are generated from it); the tool catalogue and the ledger audit are the gateway's;
 * - durable topics: a reference to another service's topic (`ESCROW_TOPICS.completed`) is a consumer edge,
 *   and must be in CONSUMES;
 * - no string action names outside packages/contracts: callers use the constants, and every action a
 *   service serves is declared in its contract.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ALLOWED_CALLS, CALLS, CONSUMES, LAYERS, type ServiceName } from './layers';
import { SERVICE_SCHEMAS } from '../../src/services';
import * as agents from '../../packages/contracts/agents';
import * as escrow from '../../packages/contracts/escrow';
import * as gateway from '../../packages/contracts/gateway';
import * as ledger from '../../packages/contracts/ledger';
import * as listings from '../../packages/contracts/listings';
import * as notifications from '../../packages/contracts/notifications';
import * as payments from '../../packages/contracts/payments';
import * as support from '../../packages/contracts/support';

const ROOT = path.resolve(__dirname, '../..');
const CONTRACTS: Record<string, Record<string, unknown>> = { agents, escrow, gateway, ledger, listings, notifications, payments, support };

/** Constant object name (LEDGER, ESCROW_TOPICS) → owning service and kind, and every action name value. */
const ACTION_OBJECTS = new Map<string, ServiceName>();
/** Action constant object → its key → action name (LEDGER.hold → 'ledger.hold'). */
const ACTION_VALUES = new Map<string, Record<string, unknown>>();
const TOPIC_OBJECTS = new Map<string, ServiceName>();
const ACTION_NAMES = new Set<string>();
for (const [service, mod] of Object.entries(CONTRACTS)) {
  for (const [name, value] of Object.entries(mod)) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
    const strings = Object.values(value).filter((v): v is string => typeof v === 'string');
    if (strings.length === 0 || !strings.every((v) => v.startsWith(`${service}.`))) continue;
    if (name.endsWith('_TOPICS')) TOPIC_OBJECTS.set(name, service as ServiceName);
    else {
      ACTION_OBJECTS.set(name, service as ServiceName);
      ACTION_VALUES.set(name, value as Record<string, unknown>);
      for (const v of strings) ACTION_NAMES.add(v);
    }
  }
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'test') continue;
      out.push(...sourceFiles(rel));
    } else if (/\.(ts|tsx)$/.test(entry.name) && !/\.(test|d)\.tsx?$/.test(entry.name)) {
      out.push(rel);
    }
  }
  return out;
}

/** Which service a file belongs to for the call table: its service folder; the catalogue and the audit kit serve the gateway. */
function ownerOf(file: string): ServiceName | null {
  const m = /^services\/([^/]+)\//.exec(file);
  if (m) return m[1] as ServiceName;
  if (file.startsWith('packages/tool-catalogue/') || file.startsWith('packages/ledger-audit/')) return 'gateway';
  return null;
}

interface Finding {
  imports: string[];
  stringNames: string[];
  calls: Set<string>;
  /** caller -> action (gateway->ledger.balance): what each service's code names of other services. */
  actions: Set<string>;
  consumes: Set<string>;
}

function scan(files: string[]): Finding {
  const found: Finding = { imports: [], stringNames: [], calls: new Set(), actions: new Set(), consumes: new Set() };
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const owner = ownerOf(file);
    const where = (node: ts.Node) => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const spec = node.moduleSpecifier.text;
        if (spec.startsWith('.')) {
          const target = path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), spec));
          const targetService = /^services\/([^/]+)/.exec(target)?.[1];
          if (file.startsWith('packages/') && /^(services|src|scripts|bench)\//.test(target)) found.imports.push(`${file} imports ${target}`);
          // Nothing that runs in production leans on the test kit or a test folder (the kit sits above src/).
          if (/^(packages|services|src)\//.test(file) && /(^|\/)test\//.test(target)) found.imports.push(`${file} imports ${target}`);
          if (file.startsWith('services/') && targetService && targetService !== file.split('/')[1]) found.imports.push(`${file} imports ${target}`);
        }
      } else if (ts.isStringLiteralLike(node) && ACTION_NAMES.has(node.text) && !file.startsWith('packages/contracts/')) {
        found.stringNames.push(`${where(node)} '${node.text}'`);
      } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && owner) {
        const object = node.expression.text;
        const callee = ACTION_OBJECTS.get(object);
        const producer = TOPIC_OBJECTS.get(object);
        if (callee && callee !== owner) {
          found.calls.add(`${owner}->${callee}`);
          found.actions.add(`${owner}->${String(ACTION_VALUES.get(object)?.[node.name.text])}`);
        }
        if (producer && producer !== owner) found.consumes.add(`${owner}<-${producer}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

describe('the call graph read from the source', () => {
  const files = ['services', 'packages', 'src', 'scripts', 'bench'].flatMap(sourceFiles);
  const found = scan(files);

  test('the contracts declare actions and topics of every service that has them', () => {
    expect(ACTION_OBJECTS.size).toBeGreaterThanOrEqual(7);
    expect(TOPIC_OBJECTS.size).toBeGreaterThanOrEqual(3);
    expect(files.length).toBeGreaterThan(100);
  });

  test('packages import no service, no service imports another service’s files, production code imports no test code', () => {
    expect(found.imports).toEqual([]);
  });

  test('no string action names outside packages/contracts, and every action is declared there', () => {
    expect(found.stringNames).toEqual([]);
    const served = Object.entries(SERVICE_SCHEMAS).flatMap(([name, schema]) => {
      const mixins = (schema.mixins ?? []) as Array<{ actions?: Record<string, unknown> }>;
      return [schema, ...mixins].flatMap((s) => Object.keys(s.actions ?? {}).map((a) => `${name}.${a}`));
    });
    expect(served.filter((a) => !ACTION_NAMES.has(a)).sort()).toEqual([]);
  });

  test('every call edge in the source is in the call table', () => {
    const bad = [...found.calls].filter((edge) => {
      const [from, to] = edge.split('->') as [ServiceName, ServiceName];
      return !ALLOWED_CALLS[from]?.includes(to);
    });
    expect(bad.sort()).toEqual([]);
    // The table is not wider than the code: every allowed edge is used somewhere.
    const unused = LAYERS.flatMap((from) => ALLOWED_CALLS[from].map((to) => `${from}->${to}`)).filter((e) => !found.calls.has(e));
    expect(unused).toEqual([]);
  });

  test("each row of the call table is exactly the other services' actions its service's code names", () => {
    const table = new Set(LAYERS.flatMap((from) => CALLS[from].map((a) => `${from}->${a}`)));
    expect([...found.actions].filter((e) => !table.has(e)).sort()).toEqual([]);
    expect([...table].filter((e) => !found.actions.has(e)).sort()).toEqual([]);
  });

  test('every durable topic a service reads is in the table of consumers', () => {
    const allowed = new Set(LAYERS.flatMap((s) => CONSUMES[s].map((p) => `${s}<-${p}`)));
    expect([...found.consumes].filter((e) => !allowed.has(e)).sort()).toEqual([]);
    expect([...allowed].filter((e) => !found.consumes.has(e)).sort()).toEqual([]);
  });
});
