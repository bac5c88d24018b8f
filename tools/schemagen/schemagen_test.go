package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"

	"yolop.dev/core/yep"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// repoRoot is the repository root, found the way the command finds it.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func generated(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := GenerateAt(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGeneratedFilesUpToDate is the drift guard: the committed schema and
// meta must be what the wire types generate.
func TestGeneratedFilesUpToDate(t *testing.T) {
	if err := Check(repoRoot(t), generated(t)); err != nil {
		t.Fatal(err)
	}
}

// TestCheckDetectsDrift proves the guard bites: after a wire change (a new
// method, a new type) the files written before it are reported stale, by
// name, with a diff and the command to fix it.
func TestCheckDetectsDrift(t *testing.T) {
	root := t.TempDir()
	src, err := ParseSource(filepath.Join(repoRoot(t), "core", "yep"))
	if err != nil {
		t.Fatal(err)
	}
	in := DefaultInput(src)
	before, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(root, before); err != nil {
		t.Fatal(err)
	}
	if err := Check(root, before); err != nil {
		t.Fatalf("freshly written files are reported stale: %v", err)
	}

	type PingParams struct {
		Nonce string `json:"nonce"`
	}
	in.Methods = append(slices.Clone(in.Methods), yep.MethodInfo{
		Name: "ping", Direction: yep.Both, Kind: yep.Notification,
		Params: reflect.TypeFor[PingParams](), Doc: "Probe the peer.",
	})
	after, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	err = Check(root, after)
	if !errors.Is(err, ErrStale) {
		t.Fatalf("Check after a wire change = %v, want ErrStale", err)
	}
	for _, want := range []string{SchemaPath + " is stale", MetaPath + " is stale", "+++ " + SchemaPath + " (generated)", `+    "PingParams": {`, "go run ./tools/schemagen"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("drift message lacks %q:\n%v", want, err)
		}
	}

	// A doc comment is part of the contract too.
	src2 := *src
	src2.TypeDocs = map[string]string{}
	for k, v := range src.TypeDocs {
		src2.TypeDocs[k] = v
	}
	src2.TypeDocs["ToolResult"] = "changed"
	after, err = Generate(DefaultInput(&src2))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(root, after); err == nil || !strings.Contains(err.Error(), SchemaPath) || strings.Contains(err.Error(), MetaPath) {
		t.Fatalf("Check after a doc change = %v, want only %s stale", err, SchemaPath)
	}
}

// TestRunCheckExitCodes drives the command as `go run ./tools/schemagen`
// would: -check passes on the repository, and fails, naming the file, on a
// copy whose schema is stale; a plain run repairs it.
func TestRunCheckExitCodes(t *testing.T) {
	real := repoRoot(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-check", "-root", real}, &out, &errb); code != 0 {
		t.Fatalf("-check on the repository exited %d: %s", code, errb.String())
	}

	root := t.TempDir()
	copyDir(t, filepath.Join(real, "core", "yep"), filepath.Join(root, "core", "yep"))
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(root, generated(t)); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, filepath.FromSlash(SchemaPath))
	if err := os.WriteFile(stale, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Found from a nested directory, as go:generate runs it.
	nested := filepath.Join(root, "core", "yep")
	t.Chdir(nested)
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"-check"}, &out, &errb); code != 1 {
		t.Fatalf("-check on a stale schema exited %d, want 1; stderr: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), SchemaPath+" is stale") || strings.Contains(errb.String(), MetaPath) {
		t.Errorf("stderr should name only %s as stale:\n%s", SchemaPath, errb.String())
	}
	if code := run(context.Background(), nil, &out, &errb); code != 0 {
		t.Fatalf("regenerating exited %d: %s", code, errb.String())
	}
	// -check checks the unstable files too, which the copy lacked.
	if code := run(context.Background(), []string{"-unstable"}, &out, &errb); code != 0 {
		t.Fatalf("regenerating the unstable files exited %d: %s", code, errb.String())
	}
	if code := run(context.Background(), []string{"-check"}, &out, &errb); code != 0 {
		t.Fatalf("-check after regenerating exited %d: %s", code, errb.String())
	}
}

func TestFindRootFailsOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	if _, err := FindRoot(dir); err == nil || !strings.Contains(err.Error(), "-root") {
		t.Fatalf("FindRoot(%s) = %v, want an error suggesting -root", dir, err)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := generated(t), generated(t)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ (-first +second):\n%s", diff)
	}
	for path, content := range a {
		if !bytes.HasSuffix(content, []byte("}\n")) {
			t.Errorf("%s does not end with a newline", path)
		}
		if !bytes.Contains(content, []byte(`"$comment": "`+Header+`"`)) {
			t.Errorf("%s lacks the generated-code header", path)
		}
	}
}

// TestTablesNameRealFields shows a table entry whose field vanished stops
// the generator instead of silently dropping a constraint.
func TestTablesNameRealFields(t *testing.T) {
	in := DefaultInput(&Source{})
	in.Methods = slices.DeleteFunc(slices.Clone(in.Methods), func(m yep.MethodInfo) bool { return m.Name == yep.MethodHookFire })
	_, err := Generate(in)
	if err == nil || !strings.Contains(err.Error(), "Enums[HookFireResult.decision]") || !strings.Contains(err.Error(), "Required[HookFireParams.toolName]") {
		t.Fatalf("Generate without hook/fire = %v, want an error naming the orphaned table entries", err)
	}
}

func TestGenerateRejectsBadMethodTable(t *testing.T) {
	type P struct{}
	for name, m := range map[string]yep.MethodInfo{
		"request without result":   {Name: "x", Kind: yep.Request, Params: reflect.TypeFor[P]()},
		"notification with result": {Name: "x", Kind: yep.Notification, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[P]()},
		"no params":                {Name: "x", Kind: yep.Notification},
	} {
		in := DefaultInput(&Source{})
		in.Methods = append(slices.Clone(in.Methods), m)
		if _, err := Generate(in); err == nil {
			t.Errorf("%s: Generate accepted it", name)
		}
	}
}

// TestEnumsMatchConstants: every closed vocabulary is exactly the string
// constants of core/yep with its prefix, so a new constant (say a new hook
// decision) cannot be missed by the schema.
func TestEnumsMatchConstants(t *testing.T) {
	src := yepSource(t)
	for key, e := range Enums {
		var consts []string
		for name, v := range src.Strings {
			if strings.HasPrefix(name, e.ConstPrefix) {
				consts = append(consts, v)
			}
		}
		sort.Strings(consts)
		vals := slices.Sorted(slices.Values(e.Values))
		if diff := cmp.Diff(consts, vals); diff != "" {
			t.Errorf("Enums[%s] vs constants %s* in core/yep (-constants +enum):\n%s", key, e.ConstPrefix, diff)
		}
	}
}

func TestErrorCodesMatchConstants(t *testing.T) {
	src := yepSource(t)
	want := map[string]int64{}
	for name, v := range src.Ints {
		if strings.HasPrefix(name, "Code") {
			want[name] = v
		}
	}
	got := map[string]int64{}
	for _, c := range ErrorCodes {
		got[c.Const] = c.Code
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ErrorCodes vs Code* constants in core/yep/errors.go (-constants +table):\n%s", diff)
	}
}

func TestCapabilityShapesUseKnownTokens(t *testing.T) {
	for _, tp := range CapabilityParamShapes {
		if !slices.Contains(yep.KnownCapabilities, tp.Token) {
			t.Errorf("CapabilityParamShapes names %q, which is not in yep.KnownCapabilities", tp.Token)
		}
	}
}

func TestMetaListsTheProtocol(t *testing.T) {
	var meta struct {
		ProtocolVersion    string   `json:"protocol_version"`
		MinProtocolVersion string   `json:"min_protocol_version"`
		Capabilities       []string `json:"capabilities"`
		HookEvents         []string `json:"hook_events"`
		TraceEventTypes    []string `json:"trace_event_types"`
		Methods            []struct {
			Name, Direction, Kind, Capability, Params, Result string
		} `json:"methods"`
	}
	if err := json.Unmarshal(generated(t)[MetaPath], &meta); err != nil {
		t.Fatal(err)
	}
	if meta.ProtocolVersion != yep.ProtocolVersion || meta.MinProtocolVersion != yep.MinProtocolVersion {
		t.Errorf("versions = %s/%s, want %s/%s", meta.ProtocolVersion, meta.MinProtocolVersion, yep.ProtocolVersion, yep.MinProtocolVersion)
	}
	if diff := cmp.Diff(yep.KnownCapabilities, meta.Capabilities); diff != "" {
		t.Errorf("capabilities (-yep +meta):\n%s", diff)
	}
	if diff := cmp.Diff(yep.HookEvents, meta.HookEvents); diff != "" {
		t.Errorf("hook events (-yep +meta):\n%s", diff)
	}
	if diff := cmp.Diff(yep.TraceEventTypes, meta.TraceEventTypes); diff != "" {
		t.Errorf("trace event types (-yep +meta):\n%s", diff)
	}
	if len(meta.Methods) != len(yep.Methods) {
		t.Fatalf("meta lists %d methods, yep %d", len(meta.Methods), len(yep.Methods))
	}
	for i, m := range yep.Methods {
		got := meta.Methods[i]
		if got.Name != m.Name || got.Direction != string(m.Direction) || got.Kind != string(m.Kind) || got.Capability != m.Capability || got.Params != m.Params.Name() {
			t.Errorf("meta method %d = %+v, want %s %s %s %q %s", i, got, m.Name, m.Direction, m.Kind, m.Capability, m.Params.Name())
		}
		if (m.Result == nil) != (got.Result == "") {
			t.Errorf("meta method %s result = %q, want %v", m.Name, got.Result, m.Result)
		}
	}
}

func yepSource(t *testing.T) *Source {
	t.Helper()
	src, err := ParseSource(filepath.Join(repoRoot(t), "core", "yep"))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// loadSchema compiles the generated schema, which checks it against the
// 2020-12 meta-schema on the way.
func loadSchema(t *testing.T) (*jsonschema.Compiler, any) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(generated(t)[SchemaPath]))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	return c, doc
}

func compile(t *testing.T, c *jsonschema.Compiler, ptr string) *jsonschema.Schema {
	t.Helper()
	s, err := c.Compile(SchemaID + "#" + ptr)
	if err != nil {
		t.Fatalf("compiling %s: %v", ptr, err)
	}
	return s
}

func TestSchemaValidatesAgainstMetaSchema(t *testing.T) {
	c, doc := loadSchema(t)
	meta, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.Validate(doc); err != nil {
		t.Fatalf("schema.json is not a valid Draft 2020-12 schema: %v", err)
	}
	if _, err := c.Compile(SchemaID); err != nil {
		t.Fatal(err)
	}
	// The meta-schema check is real: a broken keyword fails it.
	bad := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 7}
	if err := meta.Validate(bad); err == nil {
		t.Fatal("the meta-schema accepted {\"type\": 7}")
	}
}

// TestUnknownFieldsAcceptedEverywhere: no object in the schema forbids
// unknown members (forward compatibility).
func TestUnknownFieldsAcceptedEverywhere(t *testing.T) {
	_, doc := loadSchema(t)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if (k == "additionalProperties" || k == "unevaluatedProperties") && x == false {
					t.Errorf("%s/%s is false: unknown fields must be accepted", path, k)
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(path+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("", doc)
}

func TestEveryMethodHasMessages(t *testing.T) {
	_, doc := loadSchema(t)
	msgs := doc.(map[string]any)["messages"].(map[string]any)
	if len(msgs) != len(yep.Methods) {
		t.Errorf("messages has %d entries, yep.Methods %d", len(msgs), len(yep.Methods))
	}
	for _, m := range yep.Methods {
		e, ok := msgs[m.Name].(map[string]any)
		if !ok {
			t.Errorf("messages lacks %s", m.Name)
			continue
		}
		if got, want := e["params"], map[string]any{"$ref": "#/$defs/" + m.Params.Name()}; !reflect.DeepEqual(got, want) {
			t.Errorf("messages[%s].params = %v, want %v", m.Name, got, want)
		}
		_, hasResult := e["result"]
		if hasResult != (m.Kind == yep.Request) {
			t.Errorf("messages[%s] has result = %v for a %s", m.Name, hasResult, m.Kind)
		}
	}
}
