// Package wire is what both sides of the go-plugin transport share: the
// go-plugin handshake, and the one gRPC service that carries YEP — a
// single bidirectional stream whose messages are chunks of the ndjson
// byte stream (google.protobuf.BytesValue; see yep.proto).
package wire

import (
	"io"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Handshake is the go-plugin handshake a yolop host and its plugins must
// agree on: the magic cookie that tells a plugin it was started by a
// yolop host, and the version of this protocol (the service below).
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "YOLOP_GO_PLUGIN",
	MagicCookieValue: "yep-over-grpc-stream-7c1f0d2e",
}

// PluginName is the name the plugin is dispensed by.
const PluginName = "yep"

// Names of the service and its one method.
const (
	ServiceName  = "yolop.yep.v1.YEP"
	StreamMethod = "/" + ServiceName + "/Stream"
)

// MaxFrame is the most bytes one stream message carries; a longer write
// is sent as several. It stays well below gRPC's default 4 MiB message
// limit.
const MaxFrame = 1 << 20

// A StreamServer serves the YEP stream: one call per plugin process.
type StreamServer interface {
	Stream(grpc.ServerStream) error
}

// StreamDesc describes the stream to a client.
var StreamDesc = grpc.StreamDesc{StreamName: "Stream", ServerStreams: true, ClientStreams: true}

// ServiceDesc registers a [StreamServer] with a gRPC server.
var ServiceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*StreamServer)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Stream",
		ServerStreams: true,
		ClientStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			return srv.(StreamServer).Stream(stream)
		},
	}},
	Metadata: "yep.proto",
}

// A MsgStream is either end of the stream.
type MsgStream interface {
	SendMsg(m any) error
	RecvMsg(m any) error
}

// Send writes b to s in messages of at most MaxFrame bytes. An empty b
// sends nothing.
func Send(s MsgStream, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), MaxFrame)
		if err := s.SendMsg(&wrapperspb.BytesValue{Value: b[:n]}); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Recv returns the bytes of the next message from s.
func Recv(s MsgStream) ([]byte, error) {
	var m wrapperspb.BytesValue
	if err := s.RecvMsg(&m); err != nil {
		return nil, err
	}
	return m.Value, nil
}

// A Reader is an io.Reader over a stream of messages: Next returns the
// next message's bytes, or the error that ends the stream (returned by
// every later Read too). A Reader is read by one goroutine at a time.
type Reader struct {
	Next func() ([]byte, error)
	buf  []byte
	err  error
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.buf, r.err = r.Next()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

var _ io.Reader = (*Reader)(nil)
