/** What the gateway's route modules are given: app.ts builds the app from it, each route module reads it. */
import type { ServiceBroker } from 'moleculer';
import type { Config } from '../../packages/config';
import type { Db } from '../../packages/db';
import type { GatewayMetrics } from './metrics';
import type { AuthFailureThrottle } from './auth-throttle';
import type { ToolDispatcher } from './dispatch';
import type { RequestLog } from './request-log';
import type { StdioTarball } from './stdio-tarball';

/** The operator token's file in the data dir (written at start when no ADMIN_TOKEN is set; the console reads it). */
export const OPERATOR_TOKEN_FILE = 'operator-token';

export interface GatewayDeps {
  broker: ServiceBroker;
  config: Config;
  db: Db;
  dispatcher: ToolDispatcher;
  requestLog: RequestLog;
  /** Secret accepted by /api/admin besides ADMIN_TOKEN (see routes/admin.ts), or null. */
  operatorToken: string | null;
  /** HTTP and business metrics for /metrics (absent in apps built without them). */
  metrics?: GatewayMetrics;
  /** Failed admin-token / API-key authentications per client. */
  authThrottle?: AuthFailureThrottle;
  /** The stdio MCP package as the tarball /downloads serves. */
  stdioTarball: StdioTarball;
  stopping(): boolean;
}
