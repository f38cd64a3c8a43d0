/** Remote MCP endpoint (Streamable HTTP) at /mcp, built from the tool catalogue. */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerMcpRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the MCP issue.
}
