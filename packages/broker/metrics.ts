/**
 * Prometheus metrics served on the process's own PORT (the worker health server, or any HTTP
 * server that wants them), instead of Moleculer's reporter opening a second port.
 */
import { MetricReporters, type ServiceBroker } from 'moleculer';

const Prometheus = MetricReporters.Prometheus as any;
const Base = MetricReporters.Base as any;

/** Moleculer's Prometheus reporter without its own HTTP server. */
class InProcessPrometheusReporter extends Prometheus {
  init(registry: any): void {
    Base.prototype.init.call(this, registry);
    const labels = (this as any).opts.defaultLabels;
    (this as any).defaultLabels = typeof labels === 'function' ? labels.call(this, registry) : labels;
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

export function inProcessPrometheusReporter(): unknown {
  return new (InProcessPrometheusReporter as any)({ port: 0 });
}

/** The broker's metrics in the Prometheus text format ('' when metrics are off). */
export function prometheusText(broker: ServiceBroker): string {
  const reporters: any[] = (broker.metrics as any)?.reporter ?? [];
  const r = reporters.find((x) => typeof x?.generatePrometheusResponse === 'function');
  return r ? r.generatePrometheusResponse() : '';
}
