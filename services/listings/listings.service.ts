/** listings: see DESIGN §1. Built by its own issue; until then its tools answer not_implemented or service_unavailable. */
import type { ServiceSchema } from 'moleculer';

const Service: ServiceSchema = {
  name: 'listings',
  actions: {},
};

export default Service;
