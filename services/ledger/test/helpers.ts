/** A broker running just the ledger (PGlite in memory, or a PostgreSQL URL), for driving it with broker.call. */
import type { ServiceBroker } from 'moleculer';
import { createBroker } from '../../../packages/broker';
import { loadConfig } from '../../../packages/config';
import { ManualClock, type AnyServiceSchema } from '../../../packages/runtime';
import type { Db } from '../../../packages/db';
import { base62 } from '../../../packages/ids';
import ledger from '../ledger.service';

export interface LedgerHarness {
  broker: ServiceBroker;
  clock: ManualClock;
  db: Db;
  call<T = any>(action: string, params?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export async function startLedger(databaseUrl: string | null = null, extraServices: AnyServiceSchema[] = []): Promise<LedgerHarness> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    SWEEP_INTERVAL_MS: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const clock = new ManualClock();
  const broker = createBroker({ config, clock, services: [ledger, ...extraServices], brokerOptions: { nodeID: `ledger-test-${base62(8)}` } });
  await broker.start();
  return {
    broker,
    clock,
    db: (broker.getLocalService('ledger') as any).db,
    call: (action, params = {}, meta = {}) => broker.call(action, params, { meta }) as any,
    stop: () => broker.stop(),
  };
}

export const uid = (prefix: string) => `${prefix}_${base62(12)}`;

export function settled<T>(results: PromiseSettledResult<T>[]) {
  return {
    ok: results.filter((r): r is PromiseFulfilledResult<T> => r.status === 'fulfilled').map((r) => r.value),
    errors: results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason),
  };
}
