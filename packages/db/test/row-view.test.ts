/** rowView: the named columns, camelCased, in order; timestamps as ISO strings; nothing else touched. */
import { rowView } from '../row-view';

describe('rowView', () => {
  const row = {
    id: 'chk_1',
    agent_id: 'agt_1',
    last_status_code: null as number | null,
    is_seed: false,
    events: ['purchase.created'],
    created_at: new Date('2026-11-26T10:00:00.000Z'),
    paid_at: null as Date | null,
    secret: 'not shown',
  };

  it('copies the named columns under camelCase names, in the order named', () => {
    const view = rowView(row, ['id', 'agent_id', 'last_status_code', 'is_seed', 'events']);
    expect(view).toEqual({ id: 'chk_1', agentId: 'agt_1', lastStatusCode: null, isSeed: false, events: ['purchase.created'] });
    expect(Object.keys(view)).toEqual(['id', 'agentId', 'lastStatusCode', 'isSeed', 'events']);
  });

  it('turns timestamps into ISO strings and keeps a missing one null', () => {
    expect(rowView(row, ['created_at', 'paid_at'])).toEqual({ createdAt: '2026-11-26T10:00:00.000Z', paidAt: null });
  });

  it('leaves out the columns not named', () => {
    expect(rowView(row, ['id'])).not.toHaveProperty('secret');
  });
});
