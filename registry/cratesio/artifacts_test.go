package cratesio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

const cargoWithArtifacts = `
[package]
name = "yolop-extension-echo"
version = "0.1.0"
repository = "https://github.com/example/echo"

[[bin]]
name = "echo-server"

[package.metadata.yolop.artifacts.x86_64-unknown-linux-gnu]
url = "echo-{ target }.tgz"
sha256 = "` + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" + `"

[package.metadata.yolop.artifacts.aarch64-apple-darwin]
sha256 = "` + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" + `"

[package.metadata.binstall]
pkg-url = "{ repo }/releases/download/v{ version }/{ name }-{ target }-v{ version }{ archive-suffix }"
pkg-fmt = "tgz"

[package.metadata.binstall.overrides.aarch64-apple-darwin]
pkg-fmt = "bin"
pkg-url = "{repo}/releases/download/v{version}/{bin}-{target}{binary-ext}"

[package.metadata.binstall.overrides.x86_64-pc-windows-msvc]
pkg-fmt = "bin"
`

func TestSelectArtifact(t *testing.T) {
	m, err := ParseArtifactMetadata([]byte(cargoWithArtifacts))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:9/crates/yolop-extension-echo/0.1.0/download"
	a, err := m.Select(base, "x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	want := Artifact{
		Target: "x86_64-unknown-linux-gnu",
		URL:    "http://127.0.0.1:9/crates/yolop-extension-echo/0.1.0/echo-x86_64-unknown-linux-gnu.tgz",
		SHA256: strings.Repeat("a", 64), Format: "tgz", Bin: "echo-server",
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("ours (-want +got):\n%s", diff)
	}
	// binstall URL with our pinned digest; the override wins key by key.
	a, err = m.Select(base, "aarch64-apple-darwin")
	if err != nil {
		t.Fatal(err)
	}
	want = Artifact{
		Target: "aarch64-apple-darwin",
		URL:    "https://github.com/example/echo/releases/download/v0.1.0/echo-server-aarch64-apple-darwin",
		SHA256: strings.Repeat("b", 64), Format: "bin", Bin: "echo-server",
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("binstall (-want +got):\n%s", diff)
	}
	// binstall alone has no digest: refused with guidance.
	_, err = m.Select(base, "x86_64-pc-windows-msvc")
	if !errors.Is(err, ErrNoArtifact) || !strings.Contains(err.Error(), "no pinned sha256") {
		t.Errorf("unpinned binstall: %v", err)
	}
	// No entry for the target at all; the first target with one wins.
	if _, err := (ArtifactMetadata{Name: "x", Version: "1.0.0"}).Select(base, "riscv64gc-unknown-linux-gnu"); !errors.Is(err, ErrNoArtifact) {
		t.Errorf("no metadata: %v", err)
	}
	a, err = m.Select(base, "riscv64gc-unknown-linux-gnu", "x86_64-unknown-linux-gnu")
	if err != nil || a.Target != "x86_64-unknown-linux-gnu" {
		t.Errorf("fallback target: %+v, %v", a, err)
	}
	// Unknown template variable and file: URLs are refused.
	bad := ArtifactMetadata{Name: "x", Version: "1.0.0", Yolop: map[string]ArtifactSpec{
		"t1": {URL: "https://h/{ nope }", SHA256: strings.Repeat("a", 64)},
		"t2": {URL: "file:///etc/passwd", SHA256: strings.Repeat("a", 64)},
	}}
	for _, tg := range []string{"t1", "t2"} {
		if _, err := bad.Select(base, tg); !errors.Is(err, ErrNoArtifact) {
			t.Errorf("%s: %v", tg, err)
		}
	}
}

func TestTargetTriple(t *testing.T) {
	for in, want := range map[string]string{
		"linux/amd64": "x86_64-unknown-linux-gnu", "linux/arm64": "aarch64-unknown-linux-gnu",
		"darwin/arm64": "aarch64-apple-darwin", "darwin/amd64": "x86_64-apple-darwin",
		"windows/amd64": "x86_64-pc-windows-msvc", "linux/arm": "armv7-unknown-linux-gnueabihf",
	} {
		goos, goarch, _ := strings.Cut(in, "/")
		got, ok := TargetTriple(goos, goarch)
		if !ok || got != want {
			t.Errorf("TargetTriple(%s) = %q, %v; want %q", in, got, ok, want)
		}
		o, a, ok := GoPlatform(want)
		if !ok || o+"/"+a != in {
			t.Errorf("GoPlatform(%s) = %s/%s, %v", want, o, a, ok)
		}
	}
	if o, a, ok := GoPlatform("x86_64-unknown-linux-musl"); !ok || o != "linux" || a != "amd64" {
		t.Errorf("musl: %s/%s %v", o, a, ok)
	}
	if _, ok := TargetTriple("plan9", "amd64"); ok {
		t.Error("plan9 mapped to a triple")
	}
	if len(HostTargets()) == 0 {
		t.Error("HostTargets is empty on a supported host")
	}
}

func TestProvisionArtifact(t *testing.T) {
	binary := []byte("#!/bin/sh\necho hi\n")
	tgz := gz(t, rawTar(t, []tarEntry{
		dir("echo-x86_64-unknown-linux-gnu-v0.1.0/"),
		file("echo-x86_64-unknown-linux-gnu-v0.1.0/README", "r"),
		file("echo-x86_64-unknown-linux-gnu-v0.1.0/echo-server", string(binary)),
	}))
	artDir := t.TempDir()
	writeTree(t, artDir, map[string]string{"echo-server.tgz": string(tgz), "echo-server": string(binary)})
	indexDir := t.TempDir()
	publishCrate(t, indexDir, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"),
		filepath.Join(artDir, "echo-server.tgz"), filepath.Join(artDir, "echo-server"))
	reg, _ := serve(t, ServeIndex(indexDir))
	c := NewClient(fastOptions(reg))
	ctx := context.Background()
	rel, err := c.Resolve(ctx, "yolop-extension-echo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	m := ArtifactMetadata{Name: "yolop-extension-echo", Version: "0.1.0", Bin: "echo-server", Yolop: map[string]ArtifactSpec{
		"tgz":      {URL: "echo-server.tgz", SHA256: sha(tgz)},
		"bin":      {URL: "./echo-server", SHA256: sha(binary)},
		"mismatch": {URL: "echo-server.tgz", SHA256: sha(binary)},
	}}
	for _, target := range []string{"tgz", "bin"} {
		t.Run(target, func(t *testing.T) {
			a, err := m.Select(rel.DownloadURL, target)
			if err != nil {
				t.Fatal(err)
			}
			pkg := t.TempDir()
			digest, err := c.ProvisionArtifact(ctx, a, pkg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if digest != a.SHA256 {
				t.Errorf("digest %s, want %s", digest, a.SHA256)
			}
			got, err := os.ReadFile(filepath.Join(pkg, "bin", "echo-server"))
			if err != nil || string(got) != string(binary) {
				t.Errorf("bin/echo-server = %q, %v", got, err)
			}
			fi, _ := os.Stat(filepath.Join(pkg, "bin", "echo-server"))
			if fi.Mode().Perm() != 0o755 {
				t.Errorf("mode %v, want 0755", fi.Mode())
			}
			if diff := cmp.Diff([]string{". " + mustMode(t, pkg) + " 0", "bin drwxr-xr-x 0", "bin/echo-server -rwxr-xr-x " + itoa(int64(len(binary)))}, snapshot(t, pkg)); diff != "" {
				t.Errorf("package dir (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("digest mismatch", func(t *testing.T) {
		a, err := m.Select(rel.DownloadURL, "mismatch")
		if err != nil {
			t.Fatal(err)
		}
		pkg := t.TempDir()
		before := snapshot(t, pkg)
		_, err = c.ProvisionArtifact(ctx, a, pkg, nil)
		if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "nothing was installed") {
			t.Fatalf("err = %v, want ErrChecksum", err)
		}
		assertUnchanged(t, pkg, before)
	})
}

func mustMode(t *testing.T, p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().String()
}
