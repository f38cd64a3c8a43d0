/**
 * gateway: turns HTTP and MCP calls into Moleculer actions. Owns only the idempotency records and
 * the short request log; every tool's data lives in the service that serves it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import type { Context, Service } from 'moleculer';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import { base62 } from '../../packages/ids';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
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

const GatewayService: ServiceSchemaOf<GatewayThis> = {
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

  async started(this: GatewayThis) {
    const { config } = this;
    this.isStopping = false;
    this.requestLog = new RequestLog(this.db, this.logger);
    this.requestLog.start();
    this.pruneTimer = setInterval(() => void this.requestLog.prune(), 3_600_000);
    this.pruneTimer.unref();
    // Counted in the gateway's database, so every replica enforces the same limits (limits.ts).
    const limits = new SharedLimits({ db: this.db, logger: this.logger });
    const authThrottle = new AuthFailureThrottle(config.authFailuresPerMinute, this.logger, limits);
    const metrics = new GatewayMetrics(this.broker);
    if (metrics.isEnabled && config.metricsPort) {
      // The METRICS_PORT listener cannot ask for a refresh at scrape time: keep the business figures fresh.
      this.metricsTimer = setInterval(() => void metrics.refreshBusiness(), 15_000);
      this.metricsTimer.unref();
    }
    const dispatcher = new ToolDispatcher(this.broker, {
      authCacheTtlMs: config.authCacheTtlMs,
      rateLimitPerMinute: config.rateLimitPerMinute,
      db: this.db,
      requestLog: this.requestLog,
      authThrottle,
      limits,
    });
    this.dispatcher = dispatcher;

    let operatorToken: string | null = null;
    if (!config.adminToken && config.nodeEnv !== 'production' && config.dataDir !== 'memory://') {
      operatorToken = `op_${base62(40)}`;
      fs.mkdirSync(config.dataDir, { recursive: true });
      fs.writeFileSync(path.join(config.dataDir, OPERATOR_TOKEN_FILE), operatorToken, { mode: 0o600 });
    }
    this.operatorToken = operatorToken;

    const stdioTarball = StdioTarball.forDataDir(config.dataDir);
    const app = buildApp({
      broker: this.broker,
      config,
      db: this.db,
      dispatcher,
      requestLog: this.requestLog,
      operatorToken,
      metrics,
      authThrottle,
      stdioTarball,
      stopping: () => this.isStopping,
    });
    await new Promise<void>((resolve, reject) => {
      this.server = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve()));
    });
    // Idle keep-alive connections outlive the load balancer's (60 s on the common ones): the balancer,
    // not this server, closes them, so it never sends a request onto a socket being closed (sporadic 502s).
    // headersTimeout must exceed keepAliveTimeout, or a slow first header on a reused socket is cut.
    this.server!.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    this.server!.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
    this.closer = gracefulClose(this.server!);
    // Packed once in the background (a cache hit after the first start), off the path to readiness.
    setImmediate(() => void stdioTarball.get().catch((err) => this.logger.warn(`stdio MCP package not packed yet (retried on the first download): ${err.message}`)));
    this.logger.info(`gateway listening on port ${this.port()}`);
  },

  async stopped(this: GatewayThis) {
    this.isStopping = true;
    clearInterval(this.pruneTimer);
    if (this.metricsTimer) clearInterval(this.metricsTimer);
    // Stop accepting, let in-flight requests finish (answered with Connection: close), drop idle sockets.
    await this.closer?.close(10_000);
    await this.requestLog?.stop();
  },
};

export default GatewayService;
