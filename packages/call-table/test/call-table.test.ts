/** The bus permissions come from the one call table: the committed NATS config is its output, and the table matches the services. */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_SCHEMAS } from '../../../src/services';
import { subjectMatches } from '../../broker/nats-transporter';
import { ALLOWED_CALLS, DURABLE_CONSUMES, LAYERS, mayCall } from '../index';
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

  it('lets a caller publish requests only to its row, and each service receive only its own', () => {
    const ns = 'MOL-agent-market';
    const agents = permissionsFor('agents');
    const gateway = permissionsFor('gateway');
    const escrow = permissionsFor('escrow');
    // Requests go to the node Moleculer's balancer picked: REQ.<service>.<host>-<pid>-<rand>.
    expect(allows(gateway.publish, `${ns}.REQ.ledger.vm-1-abc`)).toBe(true);
    expect(allows(agents.publish, `${ns}.REQ.ledger.vm-1-abc`)).toBe(false);
    expect(allows(escrow.publish, `${ns}.REQ.ledger.vm-1-abc`)).toBe(true);
    expect(allows(escrow.publish, `${ns}.REQ.payments.vm-1-abc`)).toBe(false);
    expect(allows(escrow.subscribe, `${ns}.REQ.escrow.vm-1-abc`)).toBe(true);
    expect(allows(escrow.subscribe, `${ns}.REQ.ledger.vm-1-abc`)).toBe(false);
    // No NATS queue groups: nobody may publish or subscribe to REQB.
    for (const s of LAYERS) {
      expect(permissionsFor(s).publish.some((p) => p.includes('.REQB.'))).toBe(false);
      expect(permissionsFor(s).subscribe.some((p) => p.includes('.REQB.'))).toBe(false);
    }
    // Replies only to the callers' nodes, and only one's own.
    expect(allows(permissionsFor('ledger').publish, `${ns}.RES.escrow.vm-1-abc`)).toBe(true);
    expect(allows(permissionsFor('ledger').publish, `${ns}.RES.listings.vm-1-abc`)).toBe(false);
    expect(allows(escrow.subscribe, `${ns}.RES.gateway.vm-1-abc`)).toBe(false);
    // A service that calls nobody does not hear other nodes' INFO.
    expect(allows(agents.subscribe, `${ns}.INFO`)).toBe(false);
    expect(allows(gateway.subscribe, `${ns}.INFO`)).toBe(true);
    for (const caller of LAYERS) for (const callee of ALLOWED_CALLS[caller]) expect(mayCall(caller, `${callee}.anything`)).toBe(true);
    expect(mayCall('agents', 'ledger.creditGasPurchase')).toBe(false);
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
