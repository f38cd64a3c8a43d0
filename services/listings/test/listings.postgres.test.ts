/** Listings end to end on real PostgreSQL (TEST_DATABASE_URL). */
import { describeWithPostgres } from '../../../test/kit';
import { listingsSuite } from './suite';

describeWithPostgres('listings (PostgreSQL)', () => listingsSuite({ postgres: true }));
