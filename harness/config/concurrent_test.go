package config

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// setterEnv makes the test binary a one-shot `ext config set`: its value
// is "configDir|packageDir|field|value". The process waits for its stdin
// to close (the parent's barrier) and then sets the field.
const setterEnv = "YOLOP_CONFIG_TEST_SETTER"

func runSetter(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 4 {
		fmt.Fprintf(os.Stderr, "%s=%q: want configDir|packageDir|field|value\n", setterEnv, spec)
		return 2
	}
	m, err := packaging.Load(parts[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &Resolver{Settings: settings.New(parts[0]), Secrets: secrets.NewFile(parts[0])}
	io.Copy(io.Discard, os.Stdin) // the barrier: every setter starts together
	if _, err := r.SetField(context.Background(), m, parts[2], parts[3]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// writePackage writes a package named name whose config_schema has the
// given properties (and required list) over the cfgtest manifest, and
// loads it.
func writePackage(t *testing.T, name string, props map[string]any, required []string) (string, *packaging.Manifest) {
	t.Helper()
	b, err := os.ReadFile("testdata/cfgtest/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	man["name"] = name
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	man["yolop"].(map[string]any)["config_schema"] = schema
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestConcurrentSetFieldLosesNothing runs many real processes, released
// together, each setting a different field of one of two extensions in
// one settings.toml: every field must be there afterwards. A set that
// reads the table under one lock and writes it under another loses
// fields here.
func TestConcurrentSetFieldLosesNothing(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const perExt = 8
	props := map[string]any{}
	for i := range perExt {
		props[fmt.Sprintf("f%d", i)] = map[string]any{"type": "integer"}
	}
	cfgDir := t.TempDir()
	type setter struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   strings.Builder
	}
	var setters []*setter
	want := map[string]map[string]any{}
	for _, ext := range []string{"alpha", "beta"} {
		pkg, _ := writePackage(t, ext, props, nil)
		want[ext] = map[string]any{}
		for i := range perExt {
			field := fmt.Sprintf("f%d", i)
			want[ext][field] = int64(i + 1)
			s := &setter{cmd: exec.Command(exe, "-test.run=^$")}
			s.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%d", setterEnv, cfgDir, pkg, field, i+1))
			s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
			if s.stdin, err = s.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			if err := s.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			setters = append(setters, s)
		}
	}
	for _, s := range setters {
		s.stdin.Close()
	}
	for _, s := range setters {
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("setter %v: %v\n%s", s.cmd.Env[len(s.cmd.Env)-1], err, s.out.String())
		}
	}
	f := settings.New(cfgDir)
	for ext, fields := range want {
		got, err := f.CapabilityConfig(context.Background(), ext)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fields, got); d != "" {
			t.Errorf("%s config after %d concurrent sets (-want +got):\n%s", ext, perExt, d)
		}
	}
}

// askFunc is an ask sink made of a function.
type askFunc func(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error)

func (f askFunc) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	return f(ctx, ext, p)
}

// TestSetupIsOneTransaction fails setup after a secret was entered — an
// enum answer refused every time, a cancelled question, a settings.toml
// that cannot be written at the end — and checks that connections.toml
// and settings.toml are byte for byte what they were.
func TestSetupIsOneTransaction(t *testing.T) {
	props := map[string]any{
		"apikey": map[string]any{"type": "string", "secret": true, "env": "TXN_APIKEY"},
		"zone":   map[string]any{"type": "string", "enum": []string{"north", "south"}},
	}
	_, m := writePackage(t, "txn", props, []string{"apikey", "zone"})
	const key = "key-5b1e-canary"
	for _, tc := range []struct {
		name string
		// answer answers the n-th question (0-based); settingsPath lets it
		// break the file.
		answer func(n int, settingsPath string) yep.UIAskResult
		want   string
	}{
		{"enum refused", func(n int, _ string) yep.UIAskResult {
			if n == 0 {
				return yep.UIAskResult{Answer: key}
			}
			return yep.UIAskResult{Answer: "west"}
		}, "no acceptable value for zone after 3 attempts"},
		{"cancelled", func(n int, _ string) yep.UIAskResult {
			if n == 0 {
				return yep.UIAskResult{Answer: key}
			}
			return yep.UIAskResult{Cancelled: true}
		}, "setup cancelled at field zone"},
		{"settings unwritable", func(n int, settingsPath string) yep.UIAskResult {
			if n == 0 {
				return yep.UIAskResult{Answer: key}
			}
			// Someone breaks settings.toml while the user answers: the
			// config cannot be saved, so the secret must not stay.
			if err := os.WriteFile(settingsPath, []byte("capabilities = [[\n"), 0o644); err != nil {
				panic(err)
			}
			return yep.UIAskResult{Answer: "north"}
		}, "saving its config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			// Both files exist with other content before setup.
			if err := f.sec.Set(ctx, "other", "token", secrets.New("other-secret")); err != nil {
				t.Fatal(err)
			}
			if err := f.set.SetCapabilityConfig(ctx, "other", map[string]any{"a": int64(1)}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.set.Enable(ctx, "txn"); err != nil {
				t.Fatal(err)
			}
			secBefore, err := os.ReadFile(f.sec.Path())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			ask := askFunc(func(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
				defer func() { n++ }()
				return tc.answer(n, f.set.Path()), nil
			})
			setBefore, err := os.ReadFile(f.set.Path())
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.r.Setup(ctx, m, ask)
			if err == nil {
				t.Fatal("Setup succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was saved") {
				t.Errorf("Setup error = %v; want one saying %q and that nothing was saved", err, tc.want)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("the error shows the secret: %v", err)
			}
			if res == nil || len(res.Saved) != 0 || len(res.Secrets) != 0 {
				t.Errorf("result of a failed setup = %+v; want nothing saved", res)
			}
			secAfter, err := os.ReadFile(f.sec.Path())
			if err != nil {
				t.Fatal(err)
			}
			if string(secAfter) != string(secBefore) {
				t.Errorf("connections.toml changed by a failed setup:\nbefore:\n%s\nafter:\n%s", secBefore, secAfter)
			}
			if tc.name != "settings unwritable" {
				setAfter, _ := os.ReadFile(f.set.Path())
				if string(setAfter) != string(setBefore) {
					t.Errorf("settings.toml changed by a failed setup:\nbefore:\n%s\nafter:\n%s", setBefore, setAfter)
				}
			}
		})
	}
}
