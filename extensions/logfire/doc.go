// Package logfire is the yolop-extension-logfire capability server: it
// turns a session's trace events into OpenTelemetry spans and exports them
// over OTLP/HTTP, to Logfire or to any OTLP endpoint (an OpenTelemetry
// Collector, Jaeger, Tempo, …).
//
// Each turn is one trace: turn.started/completed is its root span,
// reason.* and act.* are children, tool.started/completed is the host's
// span of a tool call ("execute_tool <tool>") and llm.generation a GenAI
// span ("chat <model>"). Spans keep the W3C ids the host put in the
// events, so the span an extension starts under the traceparent of its
// tool/call (see yolop.dev/sdk/otel) is a child of the host's tool span in
// the same trace. Each hook.fired is a span "hook <event>" under its tool
// call's span, with the hook's decision.
//
// The exporter is the OpenTelemetry Go SDK's otlptracehttp behind a
// bounded queue: a slow or dead endpoint drops spans (counted) and never
// blocks the connection's reader, failed exports are retried with backoff
// on the retryable answers of the OTLP spec (429, 502, 503, 504), the last
// spans are flushed at shutdown within a deadline, and a failing export is
// shown as the extension's status until it recovers.
//
// Configuration: the token arrives only as the LOGFIRE_TOKEN environment
// variable (a secret in the manifest's config_schema); endpoint and
// service_name come from initialize.config, then LOGFIRE_ENDPOINT and
// OTEL_SERVICE_NAME; with no endpoint configured, the standard
// OTEL_EXPORTER_OTLP_ENDPOINT is used, and OTEL_EXPORTER_OTLP_HEADERS
// adds headers to every export (the manifest passes both on from the
// user's environment).
package logfire
