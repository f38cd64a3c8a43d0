/** Listings end to end on embedded PGlite (in memory). */
import { listingsSuite } from './suite';

describe('listings (PGlite)', () => listingsSuite({}));
