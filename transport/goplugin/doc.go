// Package goplugin is the go-plugin transport: a [core.Transport] that runs
// a capability server through github.com/hashicorp/go-plugin, for Go
// servers that want its magic-cookie handshake, protocol version, AutoMTLS
// and checksum-verified launch. A manifest selects it with
// capabilityServer.transport "go-plugin".
//
// YEP is unchanged: it runs over one bidirectional gRPC stream whose
// messages are chunks of the ndjson byte stream (internal/wire/yep.proto),
// and an [Instance] presents the two directions as Stdout and Stdin, so
// core/jsonrpc and everything above it run as over stdio.
//
// The process is a transport/stdio instance, started through go-plugin's
// RunnerFunc: the same scrubbed environment (plus go-plugin's variables),
// process group, PID namespace, parent-death signal, staged stop and
// stderr capture as a stdio server. When the spec carries a Checksum (the
// SHA-256 the approval pinned), the executable is checked with go-plugin's
// SecureConfig just before it starts, and a different file is refused with
// [ErrChecksumMismatch], naming both digests.
//
// The plugin side is [yolop.dev/transport/goplugin/plugin]: one call serves
// an sdk.Server. docs/transports.md describes the transport and how it is
// tested; its lifecycle tests start real plugin processes.
package goplugin
