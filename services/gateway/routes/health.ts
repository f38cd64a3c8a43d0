/**
 * Liveness and readiness. A gateway is ready when it can serve: not stopping, the bus connected and its
 * own database answering. A missing worker does not make it unready — that worker's tools answer
 * 503 service_unavailable with a hint while search, pages and the other tools keep working; taking
 * every replica out of the load balancer for one worker would turn a partial outage into a full one.
 * `services` shows which workers are reachable, for operators.
 */
import type { Express } from 'express';
import { ALL_SERVICES } from '../../../packages/config';
import { busConnected, withTimeout } from '../../../packages/broker/readiness';
import type { GatewayDeps } from '../deps';

export function registerHealth(app: Express, deps: GatewayDeps): void {
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, status: 'live' });
  });

  app.get('/readyz', async (_req, res) => {
    const available = new Set(deps.broker.registry.getServiceList({ onlyAvailable: true }).map((s: { name: string }) => s.name));
    const services: Record<string, boolean> = {};
    for (const name of ALL_SERVICES) services[name] = available.has(name);
    const checks: Record<string, { ok: boolean; detail?: string }> = {};
    checks.bus = busConnected(deps.broker) ? { ok: true } : { ok: false, detail: 'not connected to the bus' };
    try {
      await withTimeout(deps.db.query('SELECT 1'), 2_000, 'database');
      checks.database = { ok: true };
    } catch (err) {
      checks.database = { ok: false, detail: (err as Error)?.message ?? String(err) };
    }
    if (deps.stopping()) checks.stopping = { ok: false, detail: 'shutting down' };
    const failing = Object.entries(checks).filter(([, c]) => !c.ok).map(([name]) => name);
    const ready = failing.length === 0;
    res.set('cache-control', 'no-store');
    res.status(ready ? 200 : 503).json({ ok: ready, status: ready ? 'ready' : 'not_ready', failing, checks, services });
  });
}
