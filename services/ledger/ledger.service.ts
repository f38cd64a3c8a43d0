/** ledger: placeholder until the ledger issue lands — no accounts exist yet, so every balance is 0. */
import type { ServiceSchema } from 'moleculer';

const Service: ServiceSchema = {
  name: 'ledger',
  actions: {
    balance: {
      params: { agentId: 'string' },
      handler() {
        return { gasBalance: 0 };
      },
    },
  },
};

export default Service;
