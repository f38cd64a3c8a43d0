/** On real PostgreSQL, where identical reports really race: they still fold into one. */
import { describeWithPostgres, startTestApp, type TestApp } from '../../../test/kit';
import { newAgent } from './helpers';

describeWithPostgres('report_bug on PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true });
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('concurrent identical reports fold into one row with the full count', async () => {
    const agent = await newAgent(app.api, 'Racer');
    const failed = await app.api.call('purchase_service', { listingId: 'lst_doesnotexist0000' }, agent.apiKey);
    const report = { title: 'Racing reports', description: 'Ten identical reports sent at the same moment.', context: { requestId: failed.body.requestId! } };
    const results = await Promise.all(Array.from({ length: 10 }, () => app.api.ok('report_bug', report, agent.apiKey)));
    expect(new Set(results.map((r) => r.bug.id)).size).toBe(1);
    expect(Math.max(...results.map((r) => r.bug.count))).toBe(10);
    const listed = await app.call('support.listBugs', { agentId: agent.id }, { internal: true });
    expect(listed.bugs).toHaveLength(1);
    expect(listed.bugs[0]).toMatchObject({ count: 10, request: { requestId: failed.body.requestId, errorCode: 'not_found' } });
  });
});
