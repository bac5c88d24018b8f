package cratesio_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/Masterminds/semver/v3"
	"yolop.dev/registry/cratesio"
)

// Example packs a directory as a .crate, publishes it to a static index,
// serves the index on loopback, then resolves, downloads, verifies and
// unpacks it as an installer would.
func Example() {
	work, _ := os.MkdirTemp("", "cratesio-example-")
	defer os.RemoveAll(work)

	// Author side: pack and publish.
	src := filepath.Join(work, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"name":"echo"}`), 0o644)
	var crate bytes.Buffer
	if err := cratesio.WriteCrate(&crate, "yolop-extension-echo", "0.1.0", src); err != nil {
		panic(err)
	}
	crateFile := filepath.Join(work, "echo.crate")
	os.WriteFile(crateFile, crate.Bytes(), 0o644)
	index := filepath.Join(work, "index")
	if _, err := cratesio.Publish(context.Background(), index, crateFile, cratesio.PublishOptions{}); err != nil {
		panic(err)
	}
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	defer srv.Close()

	// Installer side.
	ctx := context.Background()
	c := cratesio.NewClient(cratesio.Options{Registry: "sparse+" + srv.URL + "/", CacheDir: filepath.Join(work, "cache")})
	rel, err := c.Resolve(ctx, "yolop-extension-echo", "^0.1", "")
	if err != nil {
		panic(err)
	}
	dest := filepath.Join(work, "store", "echo")
	if err := c.Fetch(ctx, rel, dest, nil); err != nil {
		panic(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dest, "plugin.json"))
	fmt.Println(rel.Name, rel.Version)
	fmt.Println(string(manifest))
	// Output:
	// yolop-extension-echo 0.1.0
	// {"name":"echo"}
}

// ExamplePack packs an extension package with no Go server (so nothing
// is compiled and no artifact is written) and publishes the crate to a
// static index.
func ExamplePack() {
	work, _ := os.MkdirTemp("", "cratesio-example-pack-")
	defer os.RemoveAll(work)
	pkg := filepath.Join(work, "echo")
	os.MkdirAll(pkg, 0o755)
	os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(`{"name": "echo", "version": "0.1.0"}`), 0o644)

	ctx := context.Background()
	res, err := cratesio.Pack(ctx, pkg, cratesio.PackOptions{OutDir: filepath.Join(work, "dist")})
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(res.File), len(res.Artifacts))
	pub, err := cratesio.Publish(ctx, filepath.Join(work, "index"), res.File, cratesio.PublishOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(pub.Name, pub.Version, pub.Checksum == res.SHA256)
	// Output:
	// yolop-extension-echo-0.1.0.crate 0
	// yolop-extension-echo 0.1.0 true
}

func ExampleParseRequirement() {
	req, _ := cratesio.ParseRequirement("0.2.3") // a bare version is a caret requirement
	for _, v := range []string{"0.2.9", "0.3.0", "0.2.10-rc.1"} {
		fmt.Println(v, req.Matches(mustVersion(v)))
	}
	// Output:
	// 0.2.9 true
	// 0.3.0 false
	// 0.2.10-rc.1 false
}

func mustVersion(s string) *semver.Version { return semver.MustParse(s) }
