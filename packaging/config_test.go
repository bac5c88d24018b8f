package packaging

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigFields(t *testing.T) {
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["config_schema"] = map[string]any{"type": "object"} // replaced below with ordered JSON
	})}))
	if err != nil {
		t.Fatal(err)
	}
	m.Yolop.ConfigSchema = []byte(`{
		"type": "object",
		"required": ["token", "mode"],
		"properties": {
			"token": {"type": "string", "secret": true, "env": "SVC_TOKEN", "description": "API token"},
			"mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
			"endpoint": {"type": ["string", "null"], "env": "SVC_ENDPOINT"},
			"retries": {"type": "integer", "enum": [1, 2], "default": 1}
		}
	}`)
	got, err := m.ConfigFields()
	if err != nil {
		t.Fatal(err)
	}
	want := []ConfigField{
		{Name: "token", Type: "string", Description: "API token", Required: true, Secret: true, Env: "SVC_TOKEN"},
		{Name: "mode", Type: "string", Required: true, Enum: []string{"fast", "safe"}, Default: "safe"},
		{Name: "endpoint", Type: "string", Env: "SVC_ENDPOINT"},
		{Name: "retries", Type: "integer", Enum: []string{"1", "2"}, Default: float64(1)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields in schema order (-want +got):\n%s", d)
	}

	if err := m.ValidateConfig(map[string]any{"token": "x", "mode": "fast"}); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
	err = m.ValidateConfig(map[string]any{"token": "x", "mode": "turbo", "retries": int64(3)})
	for _, w := range []string{"extension demo", "mode", "retries"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("invalid config error %v does not mention %q", err, w)
		}
	}
}

func TestConfigFieldsFromCargoAndRef(t *testing.T) {
	m, err := Load("testdata/cargo")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := m.ConfigFields()
	if err != nil || len(fs) != 2 {
		t.Fatalf("fields = %+v, %v", fs, err)
	}
	var tok ConfigField
	for _, f := range fs {
		if f.Name == "token" {
			tok = f
		}
	}
	if !tok.Secret || tok.Env != "ECHO_TOKEN" || !tok.Required {
		t.Errorf("token field = %+v", tok)
	}
	m, _ = Load("testdata/lsp")
	fs, err = m.ConfigFields()
	if err != nil || len(fs) != 2 || fs[0].Name != "servers" || fs[1].Default != float64(10000) {
		t.Errorf("lsp fields = %+v, %v", fs, err)
	}
}

// A secret that breaks its schema is reported by field and rule only: the
// validator's own messages would give its length ("got 5"), quote it
// (enum, const, pattern) or its type.
func TestSecretSchemaErrorsNeverDescribeTheValue(t *testing.T) {
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(nil)}))
	if err != nil {
		t.Fatal(err)
	}
	m.Yolop.ConfigSchema = []byte(`{
		"type": "object",
		"properties": {
			"token": {"type": "string", "secret": true, "minLength": 8, "maxLength": 9, "pattern": "^tok-", "not": {"const": "hunter2!"}},
			"pin": {"type": "integer", "secret": true, "enum": [1234]},
			"name": {"type": "string", "minLength": 8}
		}
	}`)
	for _, secret := range []map[string]any{
		{"token": "s3cr3"},          // too short: "got 5"
		{"token": "s3cr3t-value-x"}, // too long and no pattern match: quotes it
		{"token": "hunter2!"},       // const: quotes it
		{"pin": int64(4321)},        // enum: quotes it
		{"pin": "4321"},             // type: "got string"
	} {
		err := m.ValidateConfig(secret)
		if err == nil {
			t.Fatalf("%v: invalid secret accepted", secret)
		}
		for _, v := range secret {
			val := strings.Trim(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmtAny(v), "\"", ""), "'", "")), " ")
			for _, leak := range []string{val, "got 5", "got 14", "got string", "length"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%v: error %q describes the secret (%q)", secret, err, leak)
				}
			}
		}
		if !strings.Contains(err.Error(), "never shown") {
			t.Errorf("%v: error %q does not say the value is withheld", secret, err)
		}
	}
	// A plain field keeps the validator's full message.
	if err := m.ValidateConfig(map[string]any{"name": "short"}); err == nil || !strings.Contains(err.Error(), "name") || !strings.Contains(err.Error(), "5") {
		t.Errorf("plain field error = %v", err)
	}
}

func fmtAny(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}
