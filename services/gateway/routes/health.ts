/** Liveness and readiness. Ready = the HTTP server is up and the services behind the tools are reachable. */
import type { Express } from 'express';
import { ALL_SERVICES } from '../../../packages/config';
import type { GatewayDeps } from '../deps';

export function registerHealth(app: Express, deps: GatewayDeps): void {
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, status: 'live' });
  });

  app.get('/readyz', (_req, res) => {
    const available = new Set(deps.broker.registry.getServiceList({ onlyAvailable: true }).map((s: { name: string }) => s.name));
    const services: Record<string, boolean> = {};
    for (const name of ALL_SERVICES) services[name] = available.has(name);
    // Authentication needs agents; the rest degrade tool by tool (503 service_unavailable).
    const ready = !deps.stopping() && services.agents;
    res.status(ready ? 200 : 503).json({ ok: ready, status: ready ? 'ready' : 'not_ready', services });
  });
}
