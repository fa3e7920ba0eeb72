// Package tracing tests the server's OpenTelemetry tracing
// (--tracing-config-file) end to end: a server exports its spans to a
// collector in the test process, over OTLP/gRPC, as it would to an
// OpenTelemetry Collector or Jaeger.
package tracing
