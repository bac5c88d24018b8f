package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corehost "yolop.dev/core/host"
	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// BenchmarkDefinitionOverhead measures, in one run, the same definition
// three ways: textDocument/definition sent straight to gopls by the LSP
// client ("direct"); lsp_definition as a YEP tool/call to the spawned
// extension, which syncs the file, converts positions, asks its own gopls
// and formats the answer ("yep"); and lsp_definition through the real host
// runtime — a core/host Session over the stdio transport, with the grant
// built from package/plugin.json ("host"). Calls alternate so every path
// sees the same machine load. It reports each p50 and what the extension
// adds over direct.
func BenchmarkDefinitionOverhead(b *testing.B) {
	lsptest.RequireGopls(b)
	root := lsptest.Fixture(b, "gomod")
	app := filepath.Join(root, "cmd", "app", "main.go")
	ctx := context.Background()

	cfg, _ := manager.ParseConfig(nil)
	m := manager.New(root, cfg, manager.Options{})
	defer m.Shutdown()
	h, err := m.For(ctx, app)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := h.Client.Sync(ctx, app)
	if err != nil {
		b.Fatal(err)
	}
	pos, err := doc.Text.Position(12, lsptest.Column(b, app, 12, "Hello"), h.Client.Encoding())
	if err != nil {
		b.Fatal(err)
	}
	params := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.URI}, Position: pos}
	direct := func() {
		var raw json.RawMessage
		if err := h.Client.Call(ctx, "textDocument/definition", params, &raw); err != nil {
			b.Fatal(err)
		}
	}

	ext := spawn(b, root, `{}`)
	defer ext.stop(b)
	args := map[string]any{"file": "cmd/app/main.go", "line": 12, "symbol": "Hello"}
	viaExt := func() {
		res, err := ext.tool(ctx, "lsp_definition", args, nil)
		if err != nil || res.IsError {
			b.Fatalf("lsp_definition: %+v %v", res, err)
		}
	}

	sess := hostSession(b, root)
	defer sess.Close()
	rawArgs, _ := json.Marshal(args)
	viaHost := func() {
		res, err := sess.CallTool(ctx, "lsp_definition", "bench", rawArgs, nil)
		if err != nil || res.IsError {
			b.Fatalf("lsp_definition through the host: %+v %v", res, err)
		}
	}
	for range 20 { // warm the servers and the connections
		direct()
		viaExt()
		viaHost()
	}

	d := make([]time.Duration, 0, b.N)
	e := make([]time.Duration, 0, b.N)
	hs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		viaExt()
		t2 := time.Now()
		viaHost()
		t3 := time.Now()
		d = append(d, t1.Sub(t0))
		e = append(e, t2.Sub(t1))
		hs = append(hs, t3.Sub(t2))
	}
	b.StopTimer()
	pd, pe, ph := p50(d), p50(e), p50(hs)
	b.ReportMetric(float64(pd.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pe.Microseconds()), "yep-p50-µs")
	b.ReportMetric(float64(ph.Microseconds()), "host-p50-µs")
	b.ReportMetric(float64((pe - pd).Microseconds()), "yep-added-p50-µs")
	b.ReportMetric(float64((ph - pd).Microseconds()), "host-added-p50-µs")
}

// hostSession starts a core/host Session with the lsp extension granted
// from package/plugin.json, its server being this test binary in serve
// mode.
func hostSession(b *testing.B, root string) *corehost.Session {
	m, err := packaging.Load(filepath.Join(lsptest.ModuleDir(), "package"))
	if err != nil {
		b.Fatal(err)
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		b.Fatal(err)
	}
	g.Server.Command = os.Args[0]
	g.Server.Env = map[string]string{serveEnv: "1"}
	g.Server.Dir = root
	s := corehost.NewSession(corehost.SessionOptions{
		Grants:        []corehost.Grant{g},
		Transport:     stdio.New(stdio.Options{}),
		WorkspaceRoot: root,
	})
	if err := s.Start(context.Background()); err != nil {
		s.Close()
		b.Fatal(err)
	}
	return s
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
