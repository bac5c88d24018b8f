// Package otlptest is a real OTLP/HTTP trace receiver on 127.0.0.1 for
// tests: it decodes every export request with the OTLP protobuf types
// (go.opentelemetry.io/proto/otlp), as a collector's otlpreceiver does,
// keeps the spans and the request headers, and answers with a status the
// test chooses, or never (a blackholed endpoint).
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Name     string
	TraceID  string // 32 hex digits
	SpanID   string // 16 hex digits
	ParentID string // "" for a root span
	Kind     string // "Server", "Client", "Internal", …
	Start    time.Time
	End      time.Time
	// Attrs are the span's attributes as strings (%v of the value).
	Attrs map[string]string
	// StatusCode is "Unset", "Ok" or "Error".
	StatusCode    string
	StatusMessage string
	Events        []string
	// Service is the resource's service.name.
	Service string
	// Scope is the instrumentation scope's name.
	Scope string
}

// Request is one export request as received.
type Request struct {
	Path            string
	Authorization   string
	ContentType     string
	ContentEncoding string
	Spans           int
	Status          int // what the receiver answered
	// Header is every request header, as received.
	Header http.Header
}

// A Receiver is an OTLP/HTTP endpoint on 127.0.0.1.
type Receiver struct {
	srv  *httptest.Server
	quit chan struct{}

	mu        sync.Mutex
	spans     []Span
	requests  []Request
	answer    func(n int) int
	blackhole bool
	arrived   chan struct{} // closed and replaced on every request
}

// New starts a receiver that accepts every export; Close stops it.
func New() *Receiver {
	r := &Receiver{quit: make(chan struct{}), arrived: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's base URL (http://127.0.0.1:PORT); traces go to
// URL + "/v1/traces".
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver, releasing requests held by a blackhole.
func (r *Receiver) Close() {
	r.mu.Lock()
	select {
	case <-r.quit:
	default:
		close(r.quit)
	}
	r.mu.Unlock()
	r.srv.CloseClientConnections()
	r.srv.Close()
}

// Answer makes the receiver answer the nth request (counted from 0) with
// the status f returns; a non-2xx answer drops the request's spans. Nil
// accepts everything.
func (r *Receiver) Answer(f func(n int) int) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

// Blackhole makes the receiver read requests and never answer them (until
// Close or the client gives up), or, with false, answer again.
func (r *Receiver) Blackhole(on bool) {
	r.mu.Lock()
	r.blackhole = on
	r.mu.Unlock()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	rec := Request{
		Path:            req.URL.Path,
		Authorization:   req.Header.Get("Authorization"),
		ContentType:     req.Header.Get("Content-Type"),
		ContentEncoding: req.Header.Get("Content-Encoding"),
		Header:          req.Header.Clone(),
	}
	spans, err := decode(req)
	rec.Spans = len(spans)
	r.mu.Lock()
	n := len(r.requests)
	status := http.StatusOK
	switch {
	case err != nil:
		status = http.StatusBadRequest
	case req.Method != http.MethodPost || req.URL.Path != "/v1/traces":
		status = http.StatusNotFound
	case r.answer != nil:
		status = r.answer(n)
	}
	hole := r.blackhole
	rec.Status = status
	if hole {
		rec.Status = 0
	}
	r.requests = append(r.requests, rec)
	if !hole && status/100 == 2 {
		r.spans = append(r.spans, spans...)
	}
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
	if hole {
		select {
		case <-req.Context().Done():
		case <-r.quit:
		}
		return
	}
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	if status/100 != 2 {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		// Echo the credential back, as a careless endpoint might: the
		// exporter must keep it out of everything it writes.
		fmt.Fprintf(w, "rejected (Authorization: %s)", rec.Authorization)
		return
	}
	body, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(status)
	w.Write(body)
}

func decode(req *http.Request) ([]Span, error) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer z.Close()
		body = z
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var ex coltracepb.ExportTraceServiceRequest
	if req.Header.Get("Content-Type") == "application/json" {
		err = protojson.Unmarshal(raw, &ex)
	} else {
		err = proto.Unmarshal(raw, &ex)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding the OTLP export request: %w", err)
	}
	var out []Span
	for _, rs := range ex.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = value(kv.GetValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name: s.GetName(), Kind: kindName(s.GetKind().String()),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Attrs:      map[string]string{},
					StatusCode: statusName(s.GetStatus().GetCode().String()), StatusMessage: s.GetStatus().GetMessage(),
					Service: service, Scope: ss.GetScope().GetName(),
				}
				if len(s.GetParentSpanId()) > 0 {
					sp.ParentID = hex.EncodeToString(s.GetParentSpanId())
				}
				for _, kv := range s.GetAttributes() {
					sp.Attrs[kv.GetKey()] = value(kv.GetValue())
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

// value renders an attribute value as a string; a list as [a b c].
func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, value(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case *commonpb.AnyValue_BytesValue:
		return hex.EncodeToString(x.BytesValue)
	}
	return ""
}

// kindName turns SPAN_KIND_SERVER into "Server".
func kindName(s string) string {
	s = strings.TrimPrefix(s, "SPAN_KIND_")
	if s == "" {
		return s
	}
	return s[:1] + strings.ToLower(s[1:])
}

// statusName turns STATUS_CODE_ERROR into "Error".
func statusName(s string) string { return kindName(strings.TrimPrefix(s, "STATUS_CODE_")) }

// Spans returns the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Requests returns the export requests received so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// WaitFor waits until ok holds for the spans received, or timeout passes
// (a bound against hangs, not a measurement); it returns the spans and
// whether ok held.
func (r *Receiver) WaitFor(timeout time.Duration, ok func(spans []Span, reqs []Request) bool) ([]Span, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		spans, reqs, arrived := slices.Clone(r.spans), slices.Clone(r.requests), r.arrived
		r.mu.Unlock()
		if ok(spans, reqs) {
			return spans, true
		}
		select {
		case <-arrived:
		case <-deadline.C:
			return spans, false
		}
	}
}

// Tree renders spans as an indented tree, children under their parents in
// start order, one line each: name, then the attributes named in show
// (when set; "service.name" is the resource's), then the status when it
// is Error. Spans whose parent is not
// among them are roots.
func Tree(spans []Span, show ...string) string {
	byID := map[string]bool{}
	for _, s := range spans {
		byID[s.SpanID] = true
	}
	kids := map[string][]Span{}
	var roots []Span
	for _, s := range spans {
		if s.ParentID == "" || !byID[s.ParentID] {
			roots = append(roots, s)
		} else {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		}
	}
	order := func(ss []Span) {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].Start.Before(ss[j].Start) })
	}
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(s.Name)
		for _, k := range show {
			v, ok := s.Attrs[k]
			if k == "service.name" {
				v, ok = s.Service, s.Service != ""
			}
			if ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		if s.StatusCode == "Error" {
			fmt.Fprintf(&b, " [error: %s]", s.StatusMessage)
		}
		b.WriteByte('\n')
		k := kids[s.SpanID]
		order(k)
		for _, c := range k {
			walk(c, depth+1)
		}
	}
	order(roots)
	for _, s := range roots {
		walk(s, 0)
	}
	return b.String()
}
