package doctor_test

import (
	"fmt"
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// providerPackage is testdata/provider.py in the given PROVIDER_MODE,
// approved for the models scripted-1 and scripted-2.
func providerPackage(t *testing.T, mode string) string {
	t.Helper()
	return pyPackage(t, "testdata/provider.py", map[string]string{"PROVIDER_MODE": mode, "PROVIDER_MODELS": "scripted-1,scripted-2"}, "[]",
		`"provider":{"name":"scripted","models":[{"id":"scripted-1","context_window":128000},{"id":"scripted-2","context_window":8192}]}`)
}

// A provider server that announces its loopback endpoint, lists its
// models and streams a chat completion passes every provider check.
func TestProviderServerPasses(t *testing.T) {
	rep := runDoctor(t, providerPackage(t, ""), doctor.Options{})
	mustPass(t, rep)
	a := check(t, rep, doctor.GroupProvider, "announce")
	if a.Status != doctor.Pass || !strings.Contains(a.Detail, "http://127.0.0.1:") || !strings.Contains(a.Detail, "scripted-1, scripted-2") {
		t.Errorf("announce = %+v", a)
	}
	if c := check(t, rep, doctor.GroupProvider, "models"); c.Status != doctor.Pass || !strings.Contains(c.Detail, "/v1/models answered 200") {
		t.Errorf("models = %+v", c)
	}
	if c := check(t, rep, doctor.GroupProvider, "chat scripted-1"); c.Status != doctor.Pass || !strings.Contains(c.Detail, "3 chunks and data: [DONE]") {
		t.Errorf("chat = %+v", c)
	}
}

// Each fault of a provider server fails the named check, saying what is
// wrong.
func TestProviderServerFaults(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		group string
		name  string
		want  []string
	}{
		{"unapproved", doctor.GroupClamp, "provider gpt-unapproved", []string{"not declared in the approved manifest"}},
		{"remote", doctor.GroupClamp, "provider scripted", []string{"10.0.0.1", "not loopback"}},
		{"remote", doctor.GroupProvider, "announce", []string{"refused the announcement"}},
		{"localhost", doctor.GroupClamp, "provider scripted", []string{`host "localhost" is not a loopback IP literal`, "rebound"}},
		{"silent", doctor.GroupProvider, "announce", []string{"announced no provider", `"provider"`}},
		{"models_short", doctor.GroupProvider, "models", []string{"not the announced scripted-1, scripted-2"}},
		{"no_done", doctor.GroupProvider, "chat scripted-1", []string{"did not end with data: [DONE]"}},
		{"not_stream", doctor.GroupProvider, "chat scripted-1", []string{`Content-Type "application/json"`, "not text/event-stream"}},
	} {
		t.Run(fmt.Sprintf("%s/%s %s", tc.mode, tc.group, tc.name), func(t *testing.T) {
			rep := runDoctor(t, providerPackage(t, tc.mode), doctor.Options{})
			mustFail(t, rep)
			c := check(t, rep, tc.group, tc.name)
			if c.Status != doctor.Fail {
				t.Fatalf("%s %s = %+v, want fail\n%s", tc.group, tc.name, c, table(rep))
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("detail %q lacks %q", c.Detail, w)
				}
			}
		})
	}
}
