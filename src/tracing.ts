/**
 * Imported first by src/main.ts: OpenTelemetry must patch http, express and pg before anything
 * requires them. Does nothing unless OTEL_EXPORTER_OTLP_ENDPOINT is set (packages/telemetry/tracing.ts).
 */
import { startTracing } from '../packages/telemetry/tracing';

startTracing();
