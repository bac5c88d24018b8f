package sdk_test

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// A model provider starts its OpenAI-compatible endpoint when the host
// initializes it, on a free loopback port, and announces where it is. The
// endpoint lives as long as the connection: it stops when ctx ends.
func ExampleServer_Provider() {
	s := sdk.NewServer(sdk.Info{Name: "local-llm", Version: "0.1.0"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.Provider(func(ctx context.Context) (yep.ProviderParams, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return yep.ProviderParams{}, err
		}
		srv := &http.Server{Handler: http.NotFoundHandler()} // serve /v1/models and /v1/chat/completions here
		go srv.Serve(ln)
		context.AfterFunc(ctx, func() { srv.Close() })
		return yep.ProviderParams{BaseURL: "http://" + ln.Addr().String() + "/v1", Models: []string{"llama3.1:8b"}}, nil
	})

	host, stop := connect(s)
	defer stop()
	var init yep.InitializeResult
	_ = host.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion}, &init)
	var p yep.ProviderParams
	_, _ = init.CapabilityParams.Decode(yep.CapProvider, &p)
	fmt.Println(init.Capabilities, p.Models)
	// Output: [cancel provider] [llama3.1:8b]
}
