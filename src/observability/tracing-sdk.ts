import type { Logger } from 'pino';
import type { TracingSettings } from '../config.js';
import { setTracingEnabled } from './tracing.js';

export interface RunningTracing {
  /** Exports the spans still buffered, then stops. */
  stop(): Promise<void>;
}

const VERSION = '0.1.0';

/**
 * Registers the OpenTelemetry SDK: spans batched and sent over OTLP/HTTP to `settings.url`. The SDK is
 * loaded only here, so a service without tracing never loads it. The SDK itself reads the other standard
 * variables: OTEL_TRACES_SAMPLER(_ARG), OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, and
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, _TIMEOUT and _COMPRESSION.
 */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<RunningTracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources, exporters] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    settings.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'edgewatch', 'service.version': VERSION }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const exporter = new exporters.OTLPTraceExporter({ url: settings.url });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  setTracingEnabled(true);
  logger.info({ url: settings.url, protocol: settings.protocol }, 'tracing: spans are exported over OTLP');
  return {
    async stop() {
      setTracingEnabled(false);
      try {
        await provider.shutdown();
      } catch (error) {
        logger.warn({ err: error }, 'tracing: the last spans could not be exported');
      }
      const api = await import('@opentelemetry/api');
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}
