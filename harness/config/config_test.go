package config

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(setterEnv); spec != "" {
		os.Exit(runSetter(spec))
	}
	goleak.VerifyTestMain(m)
}

const token = "tok-7c1d-canary-9e"

// fixture is a config dir with real settings.toml and connections.toml,
// and the cfgtest manifest.
type fixture struct {
	dir string
	set *settings.File
	sec *secrets.File
	m   *packaging.Manifest
	r   *Resolver
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	m, err := packaging.Load("testdata/cfgtest")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fixture{dir: dir, set: settings.New(dir), sec: secrets.NewFile(dir), m: m}
	f.r = &Resolver{Settings: f.set, Secrets: f.sec, SettingsPath: f.set.Path(), LookupEnv: func(string) (string, bool) { return "", false }}
	return f
}

func (f *fixture) config(t *testing.T, cfg map[string]any) {
	t.Helper()
	if err := f.set.SetCapabilityConfig(context.Background(), "cfgtest", cfg); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) secret(t *testing.T, v string) {
	t.Helper()
	if err := f.sec.Set(context.Background(), "cfgtest", "token", secrets.New(v)); err != nil {
		t.Fatal(err)
	}
}

func TestInspectSplitsSecretsFromConfig(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// A user put the secret into settings.toml: it is ignored with a
	// warning, and the credential store's value is what the server gets.
	f.config(t, map[string]any{"mode": "fast", "count": 2, "token": "tok-put-in-settings"})
	f.secret(t, token)
	res, err := f.r.Resolve(ctx, f.m)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(res.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	// greeting is unset: its schema default is sent.
	if d := cmp.Diff(map[string]any{"mode": "fast", "count": float64(2), "greeting": "hello"}, cfg); d != "" {
		t.Errorf("initialize.config (-want +got):\n%s", d)
	}
	if strings.Contains(string(res.Config), "tok-") {
		t.Errorf("a secret reached initialize.config: %s", res.Config)
	}
	// The secret and the defaulted env field are injected.
	if d := cmp.Diff(map[string]string{"CFGTEST_TOKEN": token, "CFGTEST_GREETING": "hello"}, res.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]bool{"token": true, "mode": true, "count": true, "greeting": false, "restart": false}, res.Set); d != "" {
		t.Errorf("set (-want +got):\n%s", d)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"token" is a secret`) ||
		!strings.Contains(res.Warnings[0], "yolop ext secret set cfgtest token") || strings.Contains(res.Warnings[0], "tok-put") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	st, err := f.r.FieldStatus(ctx, f.m)
	if err != nil || !st["token"] || st["restart"] {
		t.Errorf("FieldStatus = %v, %v", st, err)
	}
}

func TestResolveRefusesMissingAndInvalid(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.r.Resolve(ctx, f.m)
	var me *MissingError
	if !errors.As(err, &me) || len(me.Fields) != 3 {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{
		"token (secret — API token): yolop ext secret set cfgtest token",
		"mode (one of fast, slow — How hard to try): add mode = <value>",
		"count (integer): add count = <value>",
		f.set.Path(),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing-fields message lacks %q:\n%v", want, err)
		}
	}
	// Wrong type, out of the enum, and a secret that fails its pattern:
	// each named by field and rule, and the secret's value never shown.
	f.config(t, map[string]any{"mode": "medium", "count": 0})
	f.secret(t, "bad-"+token)
	_, err = f.r.Resolve(ctx, f.m)
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"extension cfgtest", "mode:", "count:", "token: the secret value does not satisfy the pattern rule", "never shown"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	// Not even a redacted copy of the value, nor a part of it: the
	// message describes the rule, never the value.
	for _, leak := range []string{token, "bad-", "[redacted:cfgtest.token]"} {
		if strings.Contains(msg, leak) {
			t.Errorf("message describes the secret (%q): %s", leak, msg)
		}
	}
}

func TestExpandServer(t *testing.T) {
	env := map[string]string{"HOME_DIR": "/home/u", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	spec := core.ServerSpec{
		Args: []string{"--root=${HOME_DIR}/x", "${NOPE}", "${NOPE:-dflt}", "$HOME_DIR", "${EMPTY}"},
		Env:  map[string]string{"A": "${HOME_DIR}", "B": "x${ALSO_NOPE}y"},
	}
	warnings := ExpandServer("e", &spec, lookup)
	if d := cmp.Diff([]string{"--root=/home/u/x", "${NOPE}", "dflt", "$HOME_DIR", ""}, spec.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"A": "/home/u", "B": "x${ALSO_NOPE}y"}, spec.Env); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	want := []string{
		"extension e: ${NOPE} in capabilityServer.args[1] is not set in the environment; left as written",
		"extension e: ${ALSO_NOPE} in capabilityServer.env.B is not set in the environment; left as written",
	}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func TestScrubber(t *testing.T) {
	ctx := context.Background()
	store := secrets.NewFile(t.TempDir())
	store.Set(ctx, "a", "token", secrets.New("abc-secret"))
	store.Set(ctx, "a", "long", secrets.New("abc-secret-longer"))
	store.Set(ctx, "b", "pw", secrets.New(`p"w<\x>`))
	s := NewScrubber()
	if got := s.Scrub("abc-secret"); got != "abc-secret" {
		t.Errorf("empty scrubber changed text: %q", got)
	}
	if err := s.Load(ctx, store); err != nil {
		t.Fatal(err)
	}
	in := `tok abc-secret, long abc-secret-longer, pw p"w<\x> json "p\"w\u003c\\x\u003e" raw-json "p\"w<\\x>"`
	want := `tok [redacted:a.token], long [redacted:a.long], pw [redacted:b.pw] json "[redacted:b.pw]" raw-json "[redacted:b.pw]"`
	if got := s.Scrub(in); got != want {
		t.Errorf("Scrub =\n%s\nwant\n%s", got, want)
	}
	s.Add("c", "key", secrets.New("new-value-1"))
	if got := s.Scrub("x new-value-1 abc-secret"); got != "x [redacted:c.key] [redacted:a.token]" {
		t.Errorf("after Add: %q", got)
	}
	var buf strings.Builder
	w := s.Writer(&buf)
	n, err := w.Write([]byte("log line with new-value-1\n"))
	if err != nil || n != len("log line with new-value-1\n") || buf.String() != "log line with [redacted:c.key]\n" {
		t.Errorf("Writer: %d %v %q", n, err, buf.String())
	}
	if Label("x", "y") != "[redacted:x.y]" {
		t.Error("Label")
	}
}

// script is an ask sink answering from a list and recording questions.
type script struct {
	mu      sync.Mutex
	answers []yep.UIAskResult
	asked   []yep.UIAskParams
}

func (s *script) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, p)
	if len(s.answers) == 0 {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func answers(vals ...string) *script {
	s := &script{}
	for _, v := range vals {
		s.answers = append(s.answers, yep.UIAskResult{Answer: v})
	}
	return s
}

func TestSetupAsksByKind(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// The user put the secret in settings.toml by hand: setup must not
	// keep it there.
	f.config(t, map[string]any{"token": "tok-by-hand"})
	// Fields come in schema order (the loader keeps properties sorted):
	// count (text: "abc" is not an integer, "0" breaks minimum, then 3),
	// mode (a selector), token (secret).
	ask := answers("abc", "0", "3", "slow", token)
	res, err := f.r.Setup(ctx, f.m, ask)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&SetupResult{Saved: []string{"count", "mode", "token"}, Secrets: []string{"token"}}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if len(ask.asked) != 5 {
		t.Fatalf("asked %d questions: %+v", len(ask.asked), ask.asked)
	}
	if q := ask.asked[4]; !q.Secret || len(q.Options) != 0 || !strings.Contains(q.Prompt, "token") {
		t.Errorf("secret question = %+v", q)
	}
	if q := ask.asked[3]; q.Secret || !slices_equal(q.Options, []string{"fast", "slow"}) {
		t.Errorf("enum question = %+v", q)
	}
	if q := ask.asked[0]; q.Secret || q.Placeholder != "integer" {
		t.Errorf("text question = %+v", q)
	}
	if q := ask.asked[1]; !strings.Contains(q.Prompt, "not an integer") {
		t.Errorf("re-asked without the problem: %+v", q)
	}
	if q := ask.asked[2]; !strings.Contains(q.Prompt, "count") || !strings.Contains(q.Prompt, "minimum") {
		t.Errorf("schema problem not shown: %+v", q)
	}
	s, ok, _ := f.sec.Get(ctx, "cfgtest", "token")
	if !ok || s.Reveal() != token {
		t.Error("secret not stored in the credential store")
	}
	cfg, _ := f.set.CapabilityConfig(ctx, "cfgtest")
	if d := cmp.Diff(map[string]any{"mode": "slow", "count": int64(3)}, cfg); d != "" {
		t.Errorf("settings config (-want +got):\n%s", d)
	}
	data, _ := os.ReadFile(f.set.Path())
	if strings.Contains(string(data), "tok-") {
		t.Errorf("settings.toml holds a secret:\n%s", data)
	}
	if _, err := f.r.Resolve(ctx, f.m); err != nil {
		t.Errorf("after setup: %v", err)
	}
	// Nothing is missing any more: setup asks nothing.
	again := answers()
	if _, err := f.r.Setup(ctx, f.m, again); err != nil || len(again.asked) != 0 {
		t.Errorf("second setup asked %d, err %v", len(again.asked), err)
	}
}

func slices_equal(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestSetupWithoutAskerListsMissing(t *testing.T) {
	f := newFixture(t)
	_, err := f.r.Setup(context.Background(), f.m, nil)
	var me *MissingError
	if !errors.As(err, &me) || len(me.Fields) != 3 || !strings.Contains(err.Error(), "yolop ext secret set cfgtest token") {
		t.Fatalf("err = %v", err)
	}
	// Nothing was written.
	if _, err := os.Stat(filepath.Join(f.dir, secrets.FileName)); !os.IsNotExist(err) {
		t.Error("connections.toml written")
	}
}

func TestSetupCancelled(t *testing.T) {
	f := newFixture(t)
	_, err := f.r.Setup(context.Background(), f.m, answers("2")) // then cancelled at mode
	if err == nil || !strings.Contains(err.Error(), "cancelled at field mode") || !strings.Contains(err.Error(), "mode (one of fast, slow") {
		t.Fatalf("err = %v", err)
	}
}

// upperKind is a custom kind: it slots in ahead of the defaults without
// any change to Setup.
type upperKind struct{ TextKind }

func (upperKind) Name() string                         { return "upper" }
func (upperKind) Accepts(f packaging.ConfigField) bool { return f.Name == "mode" }
func (upperKind) Parse(_ packaging.ConfigField, a string) (any, error) {
	return strings.ToLower(a), nil
}

func TestKindsAreExtensible(t *testing.T) {
	f := newFixture(t)
	f.r.Kinds = append(Kinds{upperKind{}}, DefaultKinds()...)
	ask := answers("1", "FAST", token)
	if _, err := f.r.Setup(context.Background(), f.m, ask); err != nil {
		t.Fatal(err)
	}
	if len(ask.asked[1].Options) != 0 {
		t.Errorf("the custom kind did not ask: %+v", ask.asked[1])
	}
	cfg, _ := f.set.CapabilityConfig(context.Background(), "cfgtest")
	if cfg["mode"] != "fast" {
		t.Errorf("mode = %v", cfg["mode"])
	}
	if k := DefaultKinds().For(packaging.ConfigField{Secret: true, Enum: []string{"a"}}); k.Name() != "secret" {
		t.Errorf("a secret enum is asked as %s", k.Name())
	}
}

func TestLineAsker(t *testing.T) {
	in := "2\nplain\n"
	var out strings.Builder
	masked := 0
	a := &LineAsker{In: bufioReader(in), Out: &out, ReadSecret: func() (string, error) { masked++; return "s3cr3t-value", nil }}
	ctx := context.Background()
	r1, _ := a.Ask(ctx, "x", yep.UIAskParams{Prompt: "token", Secret: true})
	r2, _ := a.Ask(ctx, "x", yep.UIAskParams{Prompt: "mode", Options: []string{"fast", "slow"}})
	r3, _ := a.Ask(ctx, "x", yep.UIAskParams{Prompt: "name", Placeholder: "string"})
	r4, _ := a.Ask(ctx, "x", yep.UIAskParams{Prompt: "eof"})
	if r1.Answer != "s3cr3t-value" || r2.Answer != "slow" || r3.Answer != "plain" || !r4.Cancelled || masked != 1 {
		t.Errorf("answers %+v %+v %+v %+v masked %d", r1, r2, r3, r4, masked)
	}
	if strings.Contains(out.String(), "s3cr3t") || !strings.Contains(out.String(), "(saved)") || !strings.Contains(out.String(), "2) slow") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestConfiguredExampleManifest reads the SDK example's manifest through
// the packaging loader: its fields are what setup and list work from.
func TestConfiguredExampleManifest(t *testing.T) {
	m, err := packaging.Load("../../core/examples/configured")
	if err != nil {
		t.Fatal(err)
	}
	fields, err := m.ConfigFields()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]packaging.ConfigField{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	if f := byName["token"]; !f.Secret || f.Env != "CONFIGURED_TOKEN" || !f.Required {
		t.Errorf("token = %+v", f)
	}
	if f := byName["style"]; len(f.Enum) != 2 || f.Secret {
		t.Errorf("style = %+v", f)
	}
	f := newFixture(t)
	f.m = m
	ask := answers("ftp://nope", "https://api.example", "short", "tok-long-enough")
	if _, err := f.r.Setup(context.Background(), m, ask); err != nil {
		t.Fatal(err)
	}
	// endpoint and token are each refused once: a pattern, a minLength.
	if len(ask.asked) != 4 || !strings.Contains(ask.asked[1].Prompt, "endpoint") || !strings.Contains(ask.asked[3].Prompt, "minLength") ||
		!ask.asked[3].Secret || strings.Contains(ask.asked[3].Prompt, "short") {
		t.Errorf("questions = %+v", ask.asked)
	}
	if s, _, _ := f.sec.Get(context.Background(), "configured", "token"); s.Reveal() != "tok-long-enough" {
		t.Error("token not stored")
	}
}
