/** Public discovery (no key): /api/public/info, /api/public/llms, /llms.txt, /llms-full.txt, /openapi.json, API reference page. */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerDiscoveryRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the MCP/discovery issue.
}
