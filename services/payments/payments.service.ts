/** payments: gas packs, checkout (Stripe or the sandbox), reconciliation; payouts come from payouts.ts. */
import type { ServiceSchema } from 'moleculer';
import { payoutsMixin } from './payouts';

const Service: ServiceSchema = {
  name: 'payments',
  mixins: [payoutsMixin],
  actions: {},
};

export default Service;
