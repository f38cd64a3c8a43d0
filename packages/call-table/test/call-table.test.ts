/** The bus permissions come from the one call table: the committed NATS config is its output, and the table matches the services. */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_SCHEMAS } from '../../../src/services';
import { subjectMatches } from '../../broker/nats-transporter';
import { ALLOWED_CALLS, CALLS, DURABLE_CONSUMES, LAYERS, mayCall } from '../index';
import { natsAuthConfig, permissionsFor } from '../nats-auth';

const allows = (patterns: string[], subject: string) => patterns.some((p) => subjectMatches(p, subject));

describe('bus permissions generated from the call table', () => {
  it('deploy/nats/auth.conf is exactly what `npm run bus:config` generates (run it after changing the table)', () => {
    const committed = fs.readFileSync(path.resolve(__dirname, '../../../deploy/nats/auth.conf'), 'utf8');
    expect(committed).toBe(natsAuthConfig());
  });

  it('has no secret in it: every password is an environment-variable reference', () => {
    const passwords = natsAuthConfig().match(/password: .*/g)!;
    expect(passwords).toHaveLength(LAYERS.length);
    for (const p of passwords) expect(p).toMatch(/^password: \$NATS_PASSWORD_[A-Z]+$/);
  });

  it("lists, for each service, exactly the durable topics its schema's channels consume (group = the service)", () => {
    for (const service of LAYERS) {
      const channels = (SERVICE_SCHEMAS[service] as any).channels ?? {};
      expect([...DURABLE_CONSUMES[service]].sort()).toEqual(Object.keys(channels).sort());
      for (const def of Object.values<any>(channels)) expect(def.group ?? service).toBe(service);
    }
  });

  it('lets a caller publish requests only for the actions of its row, signed with its own name, and each service receive only its own', () => {
    const ns = 'MOL-agent-market';
    const agents = permissionsFor('agents');
    const gateway = permissionsFor('gateway');
    const escrow = permissionsFor('escrow');
    const payments = permissionsFor('payments');
    // REQ.<callee node>.<action>.<caller>: the node Moleculer's balancer picked, the action, the caller's service.
    expect(allows(gateway.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.balance.gateway`)).toBe(true);
    // The gateway reads balances; it cannot reach the ledger's money steps.
    for (const step of ['creditGasPurchase', 'hold', 'settle', 'void', 'cashoutDebit', 'referralBonus']) {
      expect(allows(gateway.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.${step}.gateway`)).toBe(false);
    }
    expect(allows(payments.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.creditGasPurchase.payments`)).toBe(true);
    expect(allows(escrow.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.hold.escrow`)).toBe(true);
    expect(allows(escrow.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.creditGasPurchase.escrow`)).toBe(false);
    // A caller cannot sign as another service, nor aim an action at another service's nodes.
    expect(allows(gateway.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.balance.escrow`)).toBe(false);
    expect(allows(gateway.publish, `${ns}.REQ.notifications.vm-1-abc.ledger.balance.gateway`)).toBe(false);
    expect(allows(agents.publish, `${ns}.REQ.ledger.vm-1-abc.ledger.balance.agents`)).toBe(false);
    expect(allows(escrow.publish, `${ns}.REQ.payments.vm-1-abc.payments.buyGas.escrow`)).toBe(false);
    expect(allows(escrow.subscribe, `${ns}.REQ.escrow.vm-1-abc.>`)).toBe(true);
    expect(allows(escrow.subscribe, `${ns}.REQ.ledger.vm-1-abc.>`)).toBe(false);
    // No NATS queue groups: nobody may publish or subscribe to REQB.
    for (const s of LAYERS) {
      expect(permissionsFor(s).publish.some((p) => p.includes('.REQB.'))).toBe(false);
      expect(permissionsFor(s).subscribe.some((p) => p.includes('.REQB.'))).toBe(false);
    }
    // Replies only to the callers' nodes, and only signed with one's own name.
    expect(allows(permissionsFor('ledger').publish, `${ns}.RES.escrow.vm-1-abc.ledger`)).toBe(true);
    expect(allows(permissionsFor('ledger').publish, `${ns}.RES.escrow.vm-1-abc.agents`)).toBe(false);
    expect(allows(permissionsFor('ledger').publish, `${ns}.RES.listings.vm-1-abc.ledger`)).toBe(false);
    expect(allows(escrow.subscribe, `${ns}.RES.gateway.vm-1-abc.*`)).toBe(false);
    // Announcements are signed too: notifications announces itself, never an agents node.
    const notifications = permissionsFor('notifications');
    expect(allows(notifications.publish, `${ns}.INFO.notifications`)).toBe(true);
    for (const cmd of ['INFO', 'HEARTBEAT', 'DISCONNECT', 'DISCOVER']) expect(allows(notifications.publish, `${ns}.${cmd}.agents`)).toBe(false);
    expect(allows(notifications.publish, `${ns}.INFO.gateway.vm-1-abc.agents`)).toBe(false);
    // A service that calls nobody does not hear other nodes' INFO.
    expect(allows(agents.subscribe, `${ns}.INFO.*`)).toBe(false);
    expect(allows(gateway.subscribe, `${ns}.INFO.*`)).toBe(true);
    for (const caller of LAYERS) for (const action of CALLS[caller]) expect(mayCall(caller, action)).toBe(true);
    expect(mayCall('agents', 'ledger.creditGasPurchase')).toBe(false);
    expect(mayCall('gateway', 'ledger.creditGasPurchase')).toBe(false);
    expect(mayCall('gateway', 'ledger.balance')).toBe(true);
    // The services of each row are its callees, all below it.
    for (const caller of LAYERS) for (const callee of ALLOWED_CALLS[caller]) expect(LAYERS.indexOf(callee)).toBeGreaterThan(LAYERS.indexOf(caller));
  });

  it('lets only the owner publish a durable topic, and only a consumer use its consumer', () => {
    const ledger = permissionsFor('ledger');
    const escrow = permissionsFor('escrow');
    expect(allows(escrow.publish, 'agent-market.events.escrow.purchase.completed')).toBe(true);
    expect(allows(ledger.publish, 'agent-market.events.escrow.purchase.completed')).toBe(false);
    expect(allows(ledger.publish, '$JS.API.CONSUMER.MSG.NEXT.agent-market_EVENTS.ledger--escrow_purchase_completed')).toBe(true);
    expect(allows(escrow.publish, '$JS.API.CONSUMER.MSG.NEXT.agent-market_EVENTS.ledger--escrow_purchase_completed')).toBe(false);
    expect(allows(ledger.publish, '$JS.API.STREAM.DELETE.agent-market_EVENTS')).toBe(false);
    expect(allows(ledger.subscribe, '_INBOX_ledger.abc.def')).toBe(true);
    expect(allows(ledger.subscribe, '_INBOX_escrow.abc')).toBe(false);
  });

  it('matches NATS wildcards as the server does', () => {
    expect(subjectMatches('a.>', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.>', 'a')).toBe(false);
    expect(subjectMatches('a.*', 'a.b')).toBe(true);
    expect(subjectMatches('a.*', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.b', 'a.b')).toBe(true);
  });
});
