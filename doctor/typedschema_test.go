package doctor_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// weatherSource is the typed-tools example: a Go server whose forecast
// tool is registered with typed.AddTool, and its plugin.json.
const weatherSource = "../sdk/typed/examples/weather"

// weatherPackages builds the weather example once and returns a package
// directory for each manifest: the server binary in bin/, the manifest
// as plugin.json.
func weatherPackages(t *testing.T, manifests ...[]byte) []string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "yolop-extension-weather")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = weatherSource
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", weatherSource, err, out)
	}
	var dirs []string
	for _, m := range manifests {
		dir := writeManifest(t, m)
		if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(bin, filepath.Join(dir, "bin", "yolop-extension-weather")); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// withInputSchema is the weather manifest with the forecast tool's
// input_schema replaced.
func withInputSchema(t *testing.T, manifest []byte, schema string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	tool := m["yolop"].(map[string]any)["tools"].([]any)[0].(map[string]any)
	if schema == "" {
		delete(tool, "input_schema")
	} else {
		tool["input_schema"] = json.RawMessage(schema)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A server whose tool derives its input schema from Go types (typed.AddTool)
// passes when plugin.json says the same, and fails when plugin.json's
// input_schema disagrees or is missing, with the derived schema in the
// finding to paste into plugin.json.
func TestTypedSchemaAgainstTheManifest(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join(weatherSource, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same schema, reworded and reordered: descriptions differ, a
	// title and examples are added, required is a set.
	reworded := `{"title":"Forecast","additionalProperties":false,"required":["city"],"type":"object",
	  "properties":{"days":{"type":"integer","examples":[2]},"city":{"description":"a city","type":"string"}}}`
	// days is a string here; the server's types say integer.
	wrongType := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"string"}},"required":["city"],"additionalProperties":false}`
	// days is required here; the server's types make it optional.
	moreRequired := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["days","city"],"additionalProperties":false}`
	dirs := weatherPackages(t, shipped, withInputSchema(t, shipped, reworded), withInputSchema(t, shipped, wrongType),
		withInputSchema(t, shipped, moreRequired), withInputSchema(t, shipped, ""))
	derived := `"city": {` // the derived schema, printed indented
	for i, name := range []string{"shipped", "reworded"} {
		t.Run(name, func(t *testing.T) {
			rep := runDoctor(t, dirs[i], doctor.Options{})
			mustPass(t, rep)
			c := check(t, rep, doctor.GroupTool, "tool forecast input_schema")
			if c.Status != doctor.Pass || !strings.Contains(c.Detail, "agrees with plugin.json") {
				t.Errorf("check = %+v", c)
			}
		})
	}
	for i, tc := range []struct{ name, want string }{
		{"wrong type", `at /properties/days/type plugin.json says "string", the server's types say "integer"`},
		{"more required", `at /required plugin.json says ["city","days"], the server's types say ["city"]`},
		{"no input_schema", `plugin.json gives the tool no input_schema`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runDoctor(t, dirs[2+i], doctor.Options{})
			mustFail(t, rep)
			c := check(t, rep, doctor.GroupTool, "tool forecast input_schema")
			if c.Status != doctor.Fail {
				t.Fatalf("check = %+v; want a failure", c)
			}
			for _, want := range []string{tc.want, "paste the derived schema into plugin.json as the tool's input_schema", derived, `"additionalProperties": false`} {
				if !strings.Contains(c.Detail, want) {
					t.Errorf("the finding does not say %q:\n%s", want, c.Detail)
				}
			}
		})
	}
}

// A tool whose server derived no schema (the echo example's, registered
// with sdk.Server.Tool) is not graded by the check.
func TestNoDerivedSchemaIsNotGraded(t *testing.T) {
	rep := runDoctor(t, echoPackageT(t), doctor.Options{})
	for _, c := range rep.Checks {
		if strings.HasSuffix(c.Name, " input_schema") {
			t.Errorf("a tool without a derived schema was graded: %+v", c)
		}
	}
}
