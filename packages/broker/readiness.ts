/** Pieces of readiness every process's probe shares (src/health-server.ts for workers, the gateway's /readyz). */
import type { ServiceBroker } from 'moleculer';

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer in ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}

/**
 * Moleculer's NATS transporter (nats.js 2.x) keeps `connected` true while the client reconnects,
 * so ask the NATS client itself. No transporter (in-process bus): always connected.
 */
export function busConnected(broker: ServiceBroker): boolean {
  const transit = broker.transit;
  if (!transit) return true;
  if (!transit.connected || transit.disconnecting) return false;
  // The NATS transporter's client (nats.js), which Moleculer's typings do not show.
  const client = (transit.tx as { client?: { isClosed?: () => boolean; protocol?: { connected?: boolean } } } | undefined)?.client;
  if (client && typeof client.isClosed === 'function') return !client.isClosed() && client.protocol?.connected !== false;
  return true;
}
