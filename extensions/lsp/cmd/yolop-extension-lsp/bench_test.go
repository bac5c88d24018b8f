package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
)

// BenchmarkDefinitionOverhead measures, in one run, lsp_definition through
// the extension (a YEP tool/call to the spawned server, which syncs the
// file, converts positions, asks gopls and formats the answer) against the
// same textDocument/definition sent straight to gopls by the LSP client.
// Calls alternate so both paths see the same machine load. It reports the
// p50 of each and the p50 the extension adds.
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
	for range 20 { // warm both servers and both connections
		direct()
		viaExt()
	}

	d := make([]time.Duration, 0, b.N)
	e := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		viaExt()
		t2 := time.Now()
		d = append(d, t1.Sub(t0))
		e = append(e, t2.Sub(t1))
	}
	b.StopTimer()
	pd, pe := p50(d), p50(e)
	b.ReportMetric(float64(pd.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pe.Microseconds()), "extension-p50-µs")
	b.ReportMetric(float64((pe - pd).Microseconds()), "added-p50-µs")
	if pd > 0 {
		b.ReportMetric(float64(pe)/float64(pd), "p50-ratio")
	}
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
