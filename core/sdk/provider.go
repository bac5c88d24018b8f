package sdk

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"yolop.dev/core/yep"
)

// A ProviderFunc starts (or finds) the OpenAI-compatible endpoint a server
// offers the agent as a model provider, and returns what to announce:
// the endpoint's base URL ("http://127.0.0.1:<port>/v1") and the models it
// serves. It runs once, during initialize, after [Server.OnConfig], so the
// endpoint can depend on the config and on a port known only then.
//
// ctx lives as long as the connection: it is cancelled when
// [Server.ServeConn] returns, so an endpoint started on it stops with the
// server. An error fails initialize, and the host reports it.
type ProviderFunc func(ctx context.Context) (yep.ProviderParams, error)

// Provider makes the server a model provider (the providers facet): at
// initialize it calls f and announces "provider" with f's result in
// capability_params.provider. The manifest's provider facet bounds what
// the host accepts: models it does not list are refused, and so is a base
// URL whose host is not a loopback IP literal (127.0.0.1, ::1). It panics
// if f is nil or Provider was called before.
func (s *Server) Provider(f ProviderFunc) {
	s.register("Provider", func() {
		if f == nil {
			panic("sdk: Provider needs a function")
		}
		if s.provider != nil {
			panic("sdk: Provider is called twice; a server announces one model provider")
		}
		s.provider = f
	})
}

// withProvider returns res announcing p: "provider" among the
// capabilities, in the protocol's order, and p in capability_params. The
// handshake template res was copied from is left alone.
func withProvider(res yep.InitializeResult, p yep.ProviderParams) yep.InitializeResult {
	has := map[string]bool{yep.CapProvider: true}
	var unknown []string
	for _, c := range res.Capabilities {
		has[c] = true
		if !slices.Contains(yep.KnownCapabilities, c) {
			unknown = append(unknown, c)
		}
	}
	var caps yep.Capabilities
	for _, token := range yep.KnownCapabilities {
		if has[token] {
			caps = append(caps, token)
		}
	}
	res.Capabilities = append(caps, unknown...)
	params := yep.CapabilityParams{}
	maps.Copy(params, res.CapabilityParams)
	if err := params.Set(yep.CapProvider, p); err != nil {
		// ProviderParams is strings only: it always encodes.
		panic(fmt.Sprintf("sdk: encoding capability_params.provider: %v", err))
	}
	res.CapabilityParams = params
	return res
}
