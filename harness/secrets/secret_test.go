package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/pelletier/go-toml/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const canary = "sk-canary-5f3a9e"

// TestSecretNeverPrints walks every formatting path a value can take into
// a log line or a message.
func TestSecretNeverPrints(t *testing.T) {
	s := New(canary)
	type wrapper struct {
		Token Secret
		Name  string
	}
	w := wrapper{Token: s, Name: "x"}
	cases := map[string]string{
		"%v":          fmt.Sprintf("%v", s),
		"%+v":         fmt.Sprintf("%+v", s),
		"%#v":         fmt.Sprintf("%#v", s),
		"%s":          fmt.Sprintf("%s", s),
		"%q":          fmt.Sprintf("%q", s),
		"%x":          fmt.Sprintf("%x", s),
		"%d":          fmt.Sprintf("%d", s),
		"%10v":        fmt.Sprintf("%10v", s),
		"pointer %v":  fmt.Sprintf("%v", &s),
		"struct %v":   fmt.Sprintf("%v", w),
		"struct %+v":  fmt.Sprintf("%+v", w),
		"struct %#v":  fmt.Sprintf("%#v", w),
		"Sprint":      fmt.Sprint(s),
		"Sprintln":    fmt.Sprintln(s),
		"String()":    s.String(),
		"error %w":    fmt.Errorf("wrapped: %w", errors.New(fmt.Sprint(s))).Error(),
		"slice %v":    fmt.Sprintf("%v", []Secret{s}),
		"map %v":      fmt.Sprintf("%v", map[string]Secret{"k": s}),
		"GoString()":  s.GoString(),
		"struct %+v2": fmt.Sprintf("%+v", struct{ S *Secret }{&s}),
	}
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	cases["json"] = string(js)
	jw, _ := json.Marshal(w)
	cases["json struct"] = string(jw)
	jm, _ := json.Marshal(map[string]any{"s": s, "p": &s})
	cases["json map"] = string(jm)
	txt, _ := s.MarshalText()
	cases["text"] = string(txt)
	tm, err := toml.Marshal(map[string]Secret{"token": s})
	if err != nil {
		t.Fatal(err)
	}
	cases["toml"] = string(tm)

	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: format == "json", Level: hclog.Trace})
		log.Info("connecting", "token", s, "ptr", &s, "wrapped", w, "list", []Secret{s})
		log.With("token", s).Warn("implied field")
		log.Error("formatted", "f", hclog.Fmt("%v and %s", s, s))
		cases["hclog "+format] = buf.String()
	}
	var sb bytes.Buffer
	slog.New(slog.NewJSONHandler(&sb, nil)).Info("m", "token", s)
	slog.New(slog.NewTextHandler(&sb, nil)).Info("m", "token", s)
	cases["slog"] = sb.String()

	for name, out := range cases {
		if strings.Contains(out, canary) || strings.Contains(out, "canary") {
			t.Errorf("%s leaks the value: %s", name, out)
		}
		if !strings.Contains(out, Redacted) {
			t.Errorf("%s does not say %s: %s", name, Redacted, out)
		}
	}
	if got := fmt.Sprintf("%q", s); got != `"[redacted]"` {
		t.Errorf("%%q = %s", got)
	}
	if s.Reveal() != canary || !s.Equal(New(canary)) || s.IsZero() || !(Secret{}).IsZero() {
		t.Error("Reveal/Equal/IsZero do not see the value")
	}
}
