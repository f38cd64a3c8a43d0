/**
 * Metrics, kept in the broker's Moleculer metric registry so both doors show the same figures:
 *   - GET /metrics on the gateway port, only with "Authorization: Bearer $METRICS_TOKEN" (off without it);
 *   - the broker's Prometheus listener on METRICS_PORT, bound to METRICS_HOST (127.0.0.1 by default).
 * HTTP requests by tool (or matched route) and status, latency per tool, and business figures
 * refreshed from escrow and ledger (purchases by state, gas credited, settlement lag).
 * Beside them, every /metrics has the process's standard process_* and nodejs_* metrics (prom-client).
 */
import type { ServiceBroker } from 'moleculer';
import { metricsText } from '../../packages/broker/metrics';
import { getTool } from '../../packages/tool-catalogue';
import { callEscrow, ESCROW } from '../../packages/contracts/escrow';
import { callLedger, LEDGER } from '../../packages/contracts/ledger';

const M = {
  requests: 'market.http.requests.total',
  duration: 'market.http.request.duration.seconds',
  purchases: 'market.purchases',
  gasCredited: 'market.gas.credited.total',
  saleEarned: 'market.gas.sale.earned.total',
  fees: 'market.gas.platform.fees.total',
  held: 'market.gas.held',
  outboxPending: 'market.settlement.outbox.pending',
  settlementLag: 'market.settlement.lag.seconds',
  refreshErrors: 'market.metrics.refresh.errors.total',
} as const;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const MCP_METHODS = new Set(['initialize', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'prompts/list', 'prompts/get', 'ping']);

/** A bounded label: catalogue tool names, known MCP methods and matched routes only (never raw user input). */
export function toolLabel(tool: string | null, route: string | null, method: string): string {
  if (tool) {
    if (getTool(tool)) return tool;
    if (tool.startsWith('mcp:')) {
      const rest = tool.slice(4);
      return getTool(rest) || MCP_METHODS.has(rest) ? tool : 'mcp:other';
    }
    if (tool === 'mcp') return tool;
  }
  if (route) return `${method} ${route}`;
  return tool ? 'unknown_tool' : 'unmatched';
}

export class GatewayMetrics {
  private readonly enabled: boolean;
  private refreshing: Promise<void> | null = null;

  constructor(private readonly broker: ServiceBroker) {
    this.enabled = !!broker.metrics && broker.isMetricsEnabled();
    if (!this.enabled) return;
    const reg = broker.metrics;
    reg.register({ type: 'counter', name: M.requests, labelNames: ['tool', 'status'], description: 'HTTP requests by tool (or route) and status' });
    reg.register({ type: 'histogram', name: M.duration, labelNames: ['tool'], buckets: LATENCY_BUCKETS, description: 'HTTP request duration by tool (or route), seconds' });
    reg.register({ type: 'gauge', name: M.purchases, labelNames: ['state'], description: 'Purchases by state' });
    reg.register({ type: 'gauge', name: M.gasCredited, description: 'Gas credited to agents by gas-pack purchases, all time' });
    reg.register({ type: 'gauge', name: M.saleEarned, description: 'Gas released to sellers (sale_earn), all time' });
    reg.register({ type: 'gauge', name: M.fees, description: 'Platform fees collected in gas, all time' });
    reg.register({ type: 'gauge', name: M.held, description: 'Gas held in escrow now' });
    reg.register({ type: 'gauge', name: M.outboxPending, description: 'Escrow outbox events (settlements, refunds) not yet on the bus' });
    reg.register({ type: 'gauge', name: M.settlementLag, description: 'Age of the oldest escrow outbox event not yet on the bus, seconds' });
    reg.register({ type: 'counter', name: M.refreshErrors, description: 'Business metric refreshes that failed (escrow or ledger unreachable)' });
  }

  get isEnabled(): boolean {
    return this.enabled;
  }

  /** Called by the access log for every finished request. */
  readonly observeHttp = (entry: { tool: string; status: number; durationMs: number }): void => {
    if (!this.enabled) return;
    this.broker.metrics.increment(M.requests, { tool: entry.tool, status: entry.status });
    this.broker.metrics.observe(M.duration, entry.durationMs / 1000, { tool: entry.tool });
  };

  /** Pulls the business figures from escrow and ledger (read-only actions). */
  async refreshBusiness(): Promise<void> {
    if (!this.enabled) return;
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      try {
        const [escrow, ledger] = await Promise.all([
          callEscrow(this.broker, ESCROW.metricsSnapshot, {}, { timeout: 5000 }),
          callLedger(this.broker, LEDGER.metricsSnapshot, {}, { timeout: 5000 }),
        ]);
        const reg = this.broker.metrics;
        for (const [state, n] of Object.entries(escrow.purchasesByState)) reg.set(M.purchases, n, { state });
        reg.set(M.outboxPending, escrow.outboxPending);
        reg.set(M.settlementLag, escrow.settlementLagSeconds);
        reg.set(M.gasCredited, ledger.gasCreditedTotal);
        reg.set(M.saleEarned, ledger.saleEarnedTotal);
        reg.set(M.fees, ledger.platformFeesTotal);
        reg.set(M.held, ledger.heldGas);
      } catch {
        this.broker.metrics.increment(M.refreshErrors);
      }
    })();
    try {
      await this.refreshing;
    } finally {
      this.refreshing = null;
    }
  }

  /** The Prometheus text of the broker's registry and the process's metrics (packages/broker/metrics.ts). */
  render(): Promise<string> {
    return metricsText(this.broker);
  }
}
