/** report_bug and report_experience through the tool router, and what the operator sees of them. */
import { startTestApp, type TestApp } from '../../../test/kit';
import { newAgent, type TestAgent } from './helpers';

const ADMIN_TOKEN = 'adm_support_test_0123456789abcdef';
let app: TestApp;
let alice: TestAgent;
let bob: TestAgent;

beforeAll(async () => {
  app = await startTestApp({ env: { ADMIN_TOKEN } });
  [alice, bob] = await Promise.all([newAgent(app.api, 'Alice'), newAgent(app.api, 'Bob')]);
});
afterAll(async () => {
  await app?.stop();
});

const admin = (path: string) => app.api.get(`/api/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` });
async function adminPost(path: string, body: unknown) {
  const res = await fetch(`${app.baseUrl}/api/admin${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('report_bug', () => {
  test('stores the report with its reporter; severity defaults to medium', async () => {
    const { bug } = await app.api.ok('report_bug', { title: 'Search ignores category', description: 'search_services with category=ops returns codegen listings too.' }, alice.apiKey);
    expect(bug.id).toMatch(/^bug_/);
    expect(bug).toMatchObject({ agentId: alice.id, severity: 'medium', status: 'open', count: 1, folded: false, requestAttached: false, request: null });
  });

  test('attaches the reporter\'s own failed request; the operator sees it with the request', async () => {
    const failed = await app.api.call('purchase_service', { listingId: 'lst_doesnotexist0000' }, alice.apiKey);
    expect(failed.status).toBe(404);
    const requestId = failed.body.requestId!;
    const { bug } = await app.api.ok(
      'report_bug',
      {
        title: 'Purchase of a listing I saw fails',
        description: 'purchase_service says not_found for a listing I found a minute ago.',
        severity: 'high',
        steps: '1. search 2. purchase',
        expected: 'a purchase',
        actual: 'not_found',
        provider: 'claude_code',
        context: { toolName: 'purchase_service', error: 'not_found', requestId },
      },
      alice.apiKey,
    );
    expect(bug.requestAttached).toBe(true);
    expect(bug.request).toMatchObject({ requestId, agentId: alice.id, tool: 'purchase_service', status: 404, errorCode: 'not_found' });

    const list = await admin(`/reports/bugs?severity=high&agentId=${alice.id}`);
    expect(list.status).toBe(200);
    const seen = list.body.result.bugs.find((b: any) => b.id === bug.id);
    expect(seen).toMatchObject({
      title: 'Purchase of a listing I saw fails',
      severity: 'high',
      steps: '1. search 2. purchase',
      expected: 'a purchase',
      actual: 'not_found',
      provider: 'claude_code',
      context: { toolName: 'purchase_service', error: 'not_found', requestId },
      request: { requestId, tool: 'purchase_service', status: 404, errorCode: 'not_found' },
    });
    const one = await admin(`/reports/bugs/${bug.id}`);
    expect(one.body.result.bug.request.requestId).toBe(requestId);
  });

  test('another agent\'s requestId is never attached', async () => {
    const failed = await app.api.call('purchase_service', { listingId: 'lst_doesnotexist0001' }, alice.apiKey);
    const { bug } = await app.api.ok(
      'report_bug',
      { title: 'Someone else failed', description: 'Attaching a request id that is not mine.', context: { requestId: failed.body.requestId! } },
      bob.apiKey,
    );
    expect(bug.requestAttached).toBe(false);
    expect(bug.request).toBeNull();
    expect(bug.context).toEqual({ requestId: failed.body.requestId });
  });

  test('identical reports within an hour are folded into one with a count; later ones are new', async () => {
    const report = { title: 'Wallet shows stale balance', description: 'wallet shows the old gasBalance for a minute after a purchase.' };
    const first = (await app.api.ok('report_bug', report, alice.apiKey)).bug;
    const second = (await app.api.ok('report_bug', { ...report, severity: 'critical' }, alice.apiKey)).bug;
    const third = (await app.api.ok('report_bug', { ...report, severity: 'low' }, alice.apiKey)).bug;
    expect(second.id).toBe(first.id);
    expect(third).toMatchObject({ id: first.id, count: 3, folded: true, severity: 'critical' });
    // The same text from another agent is its own report.
    const bobs = (await app.api.ok('report_bug', report, bob.apiKey)).bug;
    expect(bobs.id).not.toBe(first.id);
    expect(bobs.count).toBe(1);
    // A different description is another bug.
    const other = (await app.api.ok('report_bug', { ...report, description: `${report.description} Also in whoami.` }, alice.apiKey)).bug;
    expect(other.id).not.toBe(first.id);
    // More than an hour after the last one: a new report.
    app.clock.advance(61 * 60 * 1000);
    const later = (await app.api.ok('report_bug', report, alice.apiKey)).bug;
    expect(later.id).not.toBe(first.id);
    expect(later.count).toBe(1);
  });

  test('concurrent identical reports fold into one', async () => {
    const report = { title: 'Burst of retries', description: 'The same report sent five times at once by a retrying agent.' };
    const results = await Promise.all(Array.from({ length: 5 }, () => app.api.ok('report_bug', report, bob.apiKey)));
    const ids = new Set(results.map((r) => r.bug.id));
    expect(ids.size).toBe(1);
    expect(Math.max(...results.map((r) => r.bug.count))).toBe(5);
  });

  test.each([
    [{ description: 'no title given at all here' }, 'title'],
    [{ title: 'No description' }, 'description'],
    [{ title: 'ok', description: 'Title too short for a report.' }, 'title'],
    [{ title: 'Short description', description: 'tiny' }, 'description'],
    [{ title: 'Bad severity', description: 'Severity is not in the enum.', severity: 'urgent' }, 'severity'],
    [{ title: 'Bad context', description: 'Context requestId is not a string.', context: { requestId: 42 } }, 'context.requestId'],
  ])('invalid arguments are refused with a hint and store nothing: %j', async (args, field) => {
    const before = (await app.call('support.summary')).bugs;
    const r = await app.api.call('report_bug', args as any, alice.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe('invalid_arguments');
    expect(r.body.error!.hint).toBeTruthy();
    expect(r.body.error!.details.errors.map((e: any) => e.field)).toContain(field);
    expect((await app.call('support.summary')).bugs).toEqual(before);
  });

  test('needs an API key', async () => {
    const r = await app.api.call('report_bug', { title: 'Anonymous', description: 'No key was sent with this report.' });
    expect(r.status).toBe(401);
  });
});

describe('report_experience', () => {
  test('stores rating, journey step and notes', async () => {
    const { experience } = await app.api.ok(
      'report_experience',
      { rating: 4, journeyStep: 'buy_gas', whatWorked: 'Checkout was quick.', whatFailed: 'Polling took a while.' },
      alice.apiKey,
    );
    expect(experience).toMatchObject({ agentId: alice.id, rating: 4, journeyStep: 'buy_gas', whatWorked: 'Checkout was quick.', whatFailed: 'Polling took a while.' });
    expect(experience.id).toMatch(/^exp_/);
    const dflt = (await app.api.ok('report_experience', { rating: 2 }, bob.apiKey)).experience;
    expect(dflt.journeyStep).toBe('other');
  });

  test.each([[{ rating: 0 }], [{ rating: 6 }], [{ rating: 3.5 }], [{}], [{ rating: 3, journeyStep: 'teleport' }]])('refuses %j', async (args) => {
    const r = await app.api.call('report_experience', args, alice.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe('invalid_arguments');
    expect(r.body.error!.hint).toBeTruthy();
  });

  test('the operator lists experiences with filters', async () => {
    await app.api.ok('report_experience', { rating: 5, journeyStep: 'purchase_service', whatWorked: 'Escrow felt safe.' }, bob.apiKey);
    const byStep = await admin('/reports/experiences?journeyStep=purchase_service');
    expect(byStep.status).toBe(200);
    expect(byStep.body.result.experiences.length).toBeGreaterThan(0);
    for (const e of byStep.body.result.experiences) expect(e.journeyStep).toBe('purchase_service');
    const byRating = await admin(`/reports/experiences?rating=4&agentId=${alice.id}`);
    expect(byRating.body.result.experiences.map((e: any) => e.rating)).toEqual([4]);
    const future = await admin('/reports/experiences?since=2999-01-01T00:00:00Z');
    expect(future.body.result.experiences).toEqual([]);
    const bad = await admin('/reports/experiences?rating=9');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_arguments');
  });
});

describe('operator views', () => {
  test('bug filters, paging and validation', async () => {
    const all = await admin('/reports/bugs');
    expect(all.status).toBe(200);
    expect(all.body.result.bugs.length).toBeGreaterThan(3);
    const open = await admin('/reports/bugs?status=open');
    expect(open.body.result.bugs.length).toBe(all.body.result.bugs.length);
    const crit = await admin('/reports/bugs?severity=critical');
    for (const b of crit.body.result.bugs) expect(b.severity).toBe('critical');
    // pages of two cover the whole list without repeats
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin(`/reports/bugs?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.result.bugs.map((b: any) => b.id));
      cursor = page.body.result.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.body.result.bugs.map((b: any) => b.id));
    for (const q of ['severity=urgent', 'status=nope', 'since=yesterday', 'cursor=garbage', 'limit=0']) {
      const r = await admin(`/reports/bugs?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_arguments');
      expect(r.body.error.hint).toBeTruthy();
    }
  });

  test('the operator moves a bug through its statuses (audited); unknown ids are 404', async () => {
    const { bug } = await app.api.ok('report_bug', { title: 'Status flow', description: 'A bug the operator will acknowledge.' }, bob.apiKey);
    const r = await adminPost(`/reports/bugs/${bug.id}/status`, { status: 'acknowledged' });
    expect(r.status).toBe(200);
    expect(r.body.result.bug.status).toBe('acknowledged');
    const ack = await admin('/reports/bugs?status=acknowledged');
    expect(ack.body.result.bugs.map((b: any) => b.id)).toEqual([bug.id]);
    const bad = await adminPost(`/reports/bugs/${bug.id}/status`, { status: 'vanished' });
    expect(bad.status).toBe(400);
    const missing = await adminPost('/reports/bugs/bug_nope0000/status', { status: 'closed' });
    expect(missing.status).toBe(404);
    const audit = await admin('/audit-log?action=support.bug_status');
    expect(audit.body.result.entries.length).toBe(3);
  });

  test('the admin API needs the token; agents cannot list reports', async () => {
    const anon = await app.api.get('/api/admin/reports/bugs');
    expect(anon.status).toBe(401);
    const wrong = await app.api.get('/api/admin/reports/bugs', { authorization: `Bearer ${alice.apiKey}` });
    expect(wrong.status).toBe(401);
    await expect(app.call('support.listBugs', {}, { agent: { id: alice.id, displayName: 'A', provider: 'other' } })).rejects.toMatchObject({ type: 'forbidden' });
  });

  test('the summary holds counts only, never contents', async () => {
    const s = await app.call('support.summary');
    expect(s.bugs.total).toBeGreaterThan(3);
    expect(s.bugs.reports).toBeGreaterThan(s.bugs.total);
    expect(s.experiences.total).toBeGreaterThanOrEqual(3);
    expect(typeof s.experiences.averageRating).toBe('number');
    expect(JSON.stringify(s)).not.toMatch(/Wallet|Escrow|agt_/);
    const viaAdmin = await admin('/reports/summary');
    expect(viaAdmin.body.result).toEqual(await app.call('support.summary'));
  });
});
