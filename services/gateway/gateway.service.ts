/**
 * gateway: turns HTTP and MCP calls into Moleculer actions. Owns only the idempotency records and
 * the short request log; every tool's data lives in the service that serves it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import type { Context, Service, ServiceSchema } from 'moleculer';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import { base62 } from '../../packages/ids';
import type { RuntimeService } from '../../packages/runtime';
import { buildApp } from './app';
import { composedToolsMixin } from './composed';
import { ToolDispatcher } from './dispatch';
import { RequestLog } from './request-log';
import { AuthFailureThrottle } from './auth-throttle';
import { SharedLimits } from './limits';
import { GatewayMetrics } from './metrics';
import { migrations } from './migrations';
import { OPERATOR_TOKEN_FILE } from './deps';
import { gracefulClose, type GracefulClose } from './graceful-close';
import { StdioTarball } from './stdio-tarball';

/** Above the 60 s idle timeout of common load balancers (AWS ALB, GCP, nginx upstream keepalive_timeout). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

type GatewayThis = Service & RuntimeService & DbService & {
  isStopping: boolean;
  requestLog: RequestLog;
  pruneTimer: NodeJS.Timeout;
  metricsTimer?: NodeJS.Timeout;
  dispatcher: ToolDispatcher;
  operatorToken: string | null;
  server?: Server;
  closer?: GracefulClose;
  port(): number;
};

const GatewayService: ServiceSchema = {
  name: 'gateway',
  mixins: [dbMixin('gateway', migrations), composedToolsMixin],

  actions: {
    /** Internal, for operators and tests: one entry of the request log. */
    requestLog: {
      params: { requestId: 'string' },
      async handler(this: GatewayThis, ctx: Context<{ requestId: string }>) {
        return this.requestLog.find(ctx.params.requestId);
      },
    },
  },

  methods: {
    port(this: GatewayThis): number {
      const addr = this.server?.address();
      return addr && typeof addr === 'object' ? addr.port : 0;
    },
  },

  async started(this: Service) {
    const self = this as unknown as GatewayThis;
    const { config } = self;
    self.isStopping = false;
    self.requestLog = new RequestLog(self.db, self.logger);
    self.requestLog.start();
    self.pruneTimer = setInterval(() => void self.requestLog.prune(), 3_600_000);
    self.pruneTimer.unref();
    // Counted in the gateway's database, so every replica enforces the same limits (limits.ts).
    const limits = new SharedLimits({ db: self.db, logger: self.logger });
    const authThrottle = new AuthFailureThrottle(config.authFailuresPerMinute, self.logger, limits);
    const metrics = new GatewayMetrics(self.broker);
    if (metrics.isEnabled && config.metricsPort) {
      // The METRICS_PORT listener cannot ask for a refresh at scrape time: keep the business figures fresh.
      self.metricsTimer = setInterval(() => void metrics.refreshBusiness(), 15_000);
      self.metricsTimer.unref();
    }
    const dispatcher = new ToolDispatcher(self.broker, {
      authCacheTtlMs: config.authCacheTtlMs,
      rateLimitPerMinute: config.rateLimitPerMinute,
      db: self.db,
      requestLog: self.requestLog,
      authThrottle,
      limits,
    });
    self.dispatcher = dispatcher;

    let operatorToken: string | null = null;
    if (!config.adminToken && config.nodeEnv !== 'production' && config.dataDir !== 'memory://') {
      operatorToken = `op_${base62(40)}`;
      fs.mkdirSync(config.dataDir, { recursive: true });
      fs.writeFileSync(path.join(config.dataDir, OPERATOR_TOKEN_FILE), operatorToken, { mode: 0o600 });
    }
    self.operatorToken = operatorToken;

    const stdioTarball = StdioTarball.forDataDir(config.dataDir);
    const app = buildApp({
      broker: self.broker,
      config,
      db: self.db,
      dispatcher,
      requestLog: self.requestLog,
      operatorToken,
      metrics,
      authThrottle,
      stdioTarball,
      stopping: () => self.isStopping,
    });
    await new Promise<void>((resolve, reject) => {
      self.server = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve()));
    });
    // Idle keep-alive connections outlive the load balancer's (60 s on the common ones): the balancer,
    // not this server, closes them, so it never sends a request onto a socket being closed (sporadic 502s).
    // headersTimeout must exceed keepAliveTimeout, or a slow first header on a reused socket is cut.
    self.server!.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    self.server!.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
    self.closer = gracefulClose(self.server!);
    // Packed once in the background (a cache hit after the first start), off the path to readiness.
    setImmediate(() => void stdioTarball.get().catch((err) => self.logger.warn(`stdio MCP package not packed yet (retried on the first download): ${err.message}`)));
    self.logger.info(`gateway listening on port ${self.port()}`);
  },

  async stopped(this: Service) {
    const self = this as unknown as GatewayThis;
    self.isStopping = true;
    clearInterval(self.pruneTimer);
    if (self.metricsTimer) clearInterval(self.metricsTimer);
    // Stop accepting, let in-flight requests finish (answered with Connection: close), drop idle sockets.
    await self.closer?.close(10_000);
    await self.requestLog?.stop();
  },
};

export default GatewayService;
