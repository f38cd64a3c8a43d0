/** Seeding on the first start of an empty embedded database. */
import { startTestApp } from '../../../test/kit';

describe('seed on empty', () => {
  it('a fresh embedded database starts with seed sellers and their listings, once', async () => {
    const app = await startTestApp({ env: { SEED_ON_EMPTY: 'true' } });
    try {
      const r = await app.api.get('/api/listings?limit=50');
      expect(r.status).toBe(200);
      const listings = r.body.result.listings;
      expect(listings.length).toBe(6);
      expect(new Set(listings.map((l: any) => l.category))).toEqual(new Set(['codegen', 'research', 'ops']));
      for (const l of listings) expect(l.seller.reputation).toMatchObject({ isSeed: true, unknown: false });
      expect(await app.call('listings.seed', {}, { internal: true })).toEqual({ sellersCreated: 0, listingsCreated: 0 });
      const stats = await app.api.get('/api/public/stats');
      expect(stats.body.result).toEqual({ total: 6, byCategory: { codegen: 2, research: 2, ops: 2, design: 0, data: 0, general: 0 } });
    } finally {
      await app.stop();
    }
  });
});
