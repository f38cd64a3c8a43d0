/**
 * Prometheus metrics served on the process's own PORT (the worker health server, or any HTTP
 * server that wants them), instead of Moleculer's reporter opening a second port.
 */
import { MetricReporters, type MetricRegistry, type ServiceBroker } from 'moleculer';

/** An entry of the broker's `metrics.reporter`. */
type MetricsReporterOptions = MetricRegistry.MetricsReporter;

/** What Moleculer's Prometheus reporter has at run time beyond its typings. */
interface PrometheusReporterInternals {
  defaultLabels: unknown;
  generatePrometheusResponse(): string;
}

/** Moleculer's Prometheus reporter without its own HTTP server. */
class InProcessPrometheusReporter extends MetricReporters.Prometheus {
  override init(registry: MetricRegistry): void {
    // The base reporter's init only (Prometheus's own would open its server), then the labels as Prometheus sets them.
    MetricReporters.Base.prototype.init.call(this, registry);
    const labels: unknown = this.opts.defaultLabels;
    Object.assign(this, { defaultLabels: typeof labels === 'function' ? labels.call(this, registry) : labels });
  }

  override stop(): Promise<void> {
    return Promise.resolve();
  }
}

/** An entry of the broker's `metrics.reporter`: Moleculer takes a reporter instance there, though its typings list only options. */
export function inProcessPrometheusReporter(): MetricsReporterOptions {
  return new InProcessPrometheusReporter({ port: 0 }) as unknown as MetricsReporterOptions;
}

function isPrometheusReporter(x: unknown): x is PrometheusReporterInternals {
  return typeof (x as Partial<PrometheusReporterInternals> | null)?.generatePrometheusResponse === 'function';
}

/** The broker's metrics in the Prometheus text format ('' when metrics are off). */
export function prometheusText(broker: ServiceBroker): string {
  const reporters: unknown[] = broker.metrics?.reporter ?? [];
  const r = reporters.find(isPrometheusReporter);
  return r ? r.generatePrometheusResponse() : '';
}
