package lab

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/hashicorp/go-hclog"
	hplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"yolop.dev/transport/goplugin"
)

// ServeGoPluginGRPC serves go-plugin's own kind of call: a unary gRPC Echo
// method through go-plugin, no YEP. It is the go-plugin-grpc side: what
// YEP over go-plugin should not be slower than.
const ServeGoPluginGRPC = "go-plugin-grpc"

const (
	grpcEchoPluginName = "lab-echo"
	grpcEchoMethod     = "/yolop.lab.Echo/Echo"
)

// grpcEchoService is the unary Echo service: it returns the string it is
// given.
var grpcEchoService = grpc.ServiceDesc{
	ServiceName: "yolop.lab.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var in wrapperspb.StringValue
			if err := dec(&in); err != nil {
				return nil, err
			}
			return &wrapperspb.StringValue{Value: in.Value}, nil
		},
	}},
}

// grpcEchoPlugin is the Echo service as a go-plugin plugin, both sides.
type grpcEchoPlugin struct {
	hplugin.NetRPCUnsupportedPlugin
}

func (grpcEchoPlugin) GRPCServer(_ *hplugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&grpcEchoService, struct{}{})
	return nil
}

func (grpcEchoPlugin) GRPCClient(_ context.Context, _ *hplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return c, nil
}

func serveGoPluginGRPC() {
	hplugin.Serve(&hplugin.ServeConfig{
		HandshakeConfig: goplugin.Handshake,
		Plugins:         hplugin.PluginSet{grpcEchoPluginName: grpcEchoPlugin{}},
		GRPCServer:      hplugin.DefaultGRPCServer,
		Logger:          hclog.NewNullLogger(),
	})
}

// grpcClient calls the unary Echo through go-plugin's own client, as a
// go-plugin host calls its plugins.
type grpcClient struct {
	client  *hplugin.Client
	conn    *grpc.ClientConn
	release func() // of startChild, once the process has ended
}

func startGoPluginGRPC(ctx context.Context, exe string, args []string) (*grpcClient, error) {
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = childAttr()
	c := hplugin.NewClient(&hplugin.ClientConfig{
		HandshakeConfig:  goplugin.Handshake,
		Plugins:          hplugin.PluginSet{grpcEchoPluginName: grpcEchoPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []hplugin.Protocol{hplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
	})
	// go-plugin starts the process inside Client.
	var rpc hplugin.ClientProtocol
	release, err := startChild(func() (err error) {
		rpc, err = c.Client()
		return err
	})
	if err != nil {
		c.Kill()
		release()
		return nil, fmt.Errorf("starting the go-plugin gRPC echo: %w", err)
	}
	raw, err := rpc.Dispense(grpcEchoPluginName)
	if err != nil {
		c.Kill()
		release()
		return nil, fmt.Errorf("dispensing the go-plugin gRPC echo: %w", err)
	}
	g := &grpcClient{client: c, conn: raw.(*grpc.ClientConn), release: release}
	if err := g.call(ctx, newPayload(5), 1); err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

func (g *grpcClient) call(ctx context.Context, p *payload, _ int) error {
	var out wrapperspb.StringValue
	if err := g.conn.Invoke(ctx, grpcEchoMethod, &wrapperspb.StringValue{Value: p.text}, &out, grpc.MaxCallRecvMsgSize(64<<20)); err != nil {
		return err
	}
	if len(out.Value) != len(p.text) {
		return fmt.Errorf("Echo answered %d bytes, want %d", len(out.Value), len(p.text))
	}
	return nil
}

func (g *grpcClient) close() error {
	g.client.Kill()
	g.release()
	return nil
}
