package cratesio

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const pfx = "foo-1.0.0/"

// unpackIn unpacks archive into <parent>/out and returns the error; the
// parent's other content ("sentinel") must never change.
func unpackIn(t *testing.T, archive []byte, opts UnpackOptions) (string, []string, error) {
	t.Helper()
	parent := t.TempDir()
	if err := os.WriteFile(filepath.Join(parent, "sentinel"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(parent, "out")
	if opts.Prefix == "" {
		opts.Prefix = pfx
	}
	before := snapshot(t, parent)
	return out, before, Unpack(bytes.NewReader(archive), int64(len(archive)), out, opts)
}

func TestUnpackGood(t *testing.T) {
	setuid := file(pfx+"bin/tool", "#!/bin/sh\n")
	setuid.hdr.Mode = 0o4755 | 0o2000 | 0o1000
	archive := gz(t, rawTar(t, []tarEntry{
		dir(pfx),
		file(pfx+"Cargo.toml", "[package]\n"),
		dir(pfx + "src/"),
		file(pfx+"src/main.rs", "fn main() {}\n"),
		file(pfx+".cargo-ok", `{"v":1}`),
		setuid,
		{hdr: tar.Header{Typeflag: tar.TypeReg, Name: pfx + "long/" + strings.Repeat("n", 150), Size: 1, Mode: 0o644, Format: tar.FormatPAX}, body: "x"},
	}))
	out, _, err := unpackIn(t, archive, UnpackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, out)
	if _, err := os.Lstat(filepath.Join(out, ".cargo-ok")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".cargo-ok from the archive was written (err=%v)", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "src/main.rs"))
	if err != nil || string(b) != "fn main() {}\n" {
		t.Errorf("src/main.rs = %q, %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(out, "bin/tool"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/tool mode %v: want exec bit kept, setuid/setgid/sticky dropped", fi.Mode())
	}
	if len(got) != 8 { // ., Cargo.toml, bin, bin/tool, long, long/n…, src, src/main.rs
		t.Errorf("unexpected tree: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"out", "sentinel"}, names); diff != "" {
		t.Errorf("parent holds leftovers (-want +got):\n%s", diff)
	}
}

func TestUnpackHostile(t *testing.T) {
	longName := pfx + strings.Repeat("d/", 70) + "f"
	paxSize := file(pfx+"a", "hello")
	paxSize.hdr.PAXRecords = map[string]string{"size": "5"}
	paxXattr := file(pfx+"a", "x")
	paxXattr.hdr.PAXRecords = map[string]string{"SCHILY.xattr.user.x": "y"}
	global := tarEntry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "abc"}}}
	good := rawTar(t, []tarEntry{file(pfx+"a", "hello")})

	cases := []struct {
		name    string
		archive []byte
		opts    UnpackOptions
		want    error
	}{
		// 15: not gzip, bad CRC, truncated, trailing garbage.
		{"not gzip", good, UnpackOptions{}, ErrUnsafeArchive},
		{"bad crc", corruptCRC(gz(t, good)), UnpackOptions{}, ErrUnsafeArchive},
		{"truncated gzip", gz(t, good)[:40], UnpackOptions{}, ErrUnsafeArchive},
		{"trailing garbage", append(gz(t, good), []byte("garbage!garbage!")...), UnpackOptions{}, ErrUnsafeArchive},
		// 16: gzip bomb with a lowered cap.
		{"gzip bomb", gz(t, rawTar(t, []tarEntry{file(pfx+"zeros", strings.Repeat("\x00", 1<<20))})), UnpackOptions{MaxTotalBytes: 64 << 10}, ErrTooLarge},
		{"gzip bomb, stream cap", gz(t, rawTar(t, []tarEntry{file(pfx+"zeros", strings.Repeat("\x00", 1<<20))})), UnpackOptions{MaxTotalBytes: 64 << 10, MaxFileBytes: 2 << 20}, ErrTooLarge},
		{"per-file cap", gz(t, good), UnpackOptions{MaxFileBytes: 2}, ErrTooLarge},
		{"file count", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), file(pfx+"b", "2"), file(pfx+"c", "3")})), UnpackOptions{MaxFiles: 2}, ErrUnsafeArchive},
		// 17: outside the prefix.
		{"other crate prefix", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), file("bar-1.0.0/a", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"dotdot", gz(t, rawTar(t, []tarEntry{file(pfx+"../x", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"bare dotdot", gz(t, rawTar(t, []tarEntry{file("../x", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"absolute", gz(t, rawTar(t, []tarEntry{file("/etc/x", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"absolute inside", gz(t, rawTar(t, []tarEntry{file(pfx+"/etc/x", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"drive letter", gz(t, rawTar(t, []tarEntry{file(pfx+`C:\x`, "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"nested dotdot", gz(t, rawTar(t, []tarEntry{file(pfx+"a/../../x", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"empty name", gz(t, rawTar(t, []tarEntry{file("", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"prefix is a file", gz(t, rawTar(t, []tarEntry{file(strings.TrimSuffix(pfx, "/"), "1")})), UnpackOptions{}, ErrUnsafeArchive},
		// 18: entry types.
		{"symlink", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: pfx + "l", Linkname: "/etc/passwd"}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"hard link", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), {hdr: tar.Header{Typeflag: tar.TypeLink, Name: pfx + "l", Linkname: pfx + "a"}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"char device", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeChar, Name: pfx + "tty", Devmajor: 5}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"block device", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeBlock, Name: pfx + "sda", Devmajor: 8}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"fifo", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: pfx + "p"}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"contiguous", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeCont, Name: pfx + "c"}}})), UnpackOptions{}, ErrUnsafeArchive},
		{"gnu sparse", gz(t, gnuSparse(t)), UnpackOptions{}, ErrUnsafeArchive},
		{"pax global header", gz(t, rawTar(t, []tarEntry{global, file(pfx+"a", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		// 19: symlink games (refused at the link entry).
		{"symlink then dir", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: pfx + "x", Linkname: "/tmp"}}, dir(pfx + "x/")})), UnpackOptions{}, ErrUnsafeArchive},
		{"symlink then file under it", gz(t, rawTar(t, []tarEntry{{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: pfx + "x", Linkname: ".."}}, file(pfx+"x/exploit/foo", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		// 20: duplicates.
		{"duplicate", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), file(pfx+"a", "2")})), UnpackOptions{}, ErrUnsafeArchive},
		{"case fold", gz(t, rawTar(t, []tarEntry{file(pfx+"A.rs", "1"), file(pfx+"a.rs", "2")})), UnpackOptions{}, ErrUnsafeArchive},
		{"case fold dir", gz(t, rawTar(t, []tarEntry{file(pfx+"Src/a", "1"), file(pfx+"src/b", "2")})), UnpackOptions{}, ErrUnsafeArchive},
		{"nfc vs nfd", gz(t, rawTar(t, []tarEntry{file(pfx+"caf\u00e9", "1"), file(pfx+"cafe\u0301", "2")})), UnpackOptions{}, ErrUnsafeArchive},
		{"file then dir", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), dir(pfx + "a/")})), UnpackOptions{}, ErrUnsafeArchive},
		{"file under file", gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1"), file(pfx+"a/b", "2")})), UnpackOptions{}, ErrUnsafeArchive},
		// 21: PAX records.
		{"pax size", gz(t, rawTar(t, []tarEntry{paxSize})), UnpackOptions{}, ErrUnsafeArchive},
		{"pax xattr", gz(t, rawTar(t, []tarEntry{paxXattr})), UnpackOptions{}, ErrUnsafeArchive},
		// 22: Windows names, backslashes, NUL, length and depth.
		{"nul device", gz(t, rawTar(t, []tarEntry{file(pfx+"nul", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"com1", gz(t, rawTar(t, []tarEntry{file(pfx+"src/COM1", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"aux.rs", gz(t, rawTar(t, []tarEntry{file(pfx+"aux.rs", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"trailing dot", gz(t, rawTar(t, []tarEntry{file(pfx+"a.", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"trailing space", gz(t, rawTar(t, []tarEntry{file(pfx+"a ", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"ads", gz(t, rawTar(t, []tarEntry{file(pfx+"a:stream", "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"backslash", gz(t, rawTar(t, []tarEntry{file(pfx+`a\..\..\x`, "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"too deep", gz(t, rawTar(t, []tarEntry{file(longName, "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"too long", gz(t, rawTar(t, []tarEntry{file(pfx+strings.Repeat("a", 4097), "1")})), UnpackOptions{}, ErrUnsafeArchive},
		{"bad utf8", gz(t, rawTar(t, []tarEntry{file(pfx+"\xff", "1")})), UnpackOptions{}, ErrUnsafeArchive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, before, err := unpackIn(t, tc.archive, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
			parent := filepath.Dir(out)
			assertUnchanged(t, parent, before)
		})
	}
}

func TestUnpackGlobalHeaderSkipped(t *testing.T) {
	global := tarEntry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123abcd"}}}
	out, _, err := unpackIn(t, gz(t, rawTar(t, []tarEntry{global, file(pfx+"a", "1")})), UnpackOptions{SkipGlobalHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{". drwxr-xr-x 0", "a -rw-r--r-- 1"}, snapshot(t, out)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

func TestUnpackExistingDest(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	a := gz(t, rawTar(t, []tarEntry{file(pfx+"a", "1")}))
	if err := Unpack(bytes.NewReader(a), int64(len(a)), out, UnpackOptions{Prefix: pfx}); err == nil {
		t.Fatal("unpacking over an existing directory succeeded")
	}
}

// corruptCRC flips a bit of the gzip trailer's CRC-32.
func corruptCRC(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-8] ^= 0xff
	return c
}

// gnuSparse builds a tar whose one entry has typeflag 'S' by patching a
// ustar header (tar.Writer refuses to write sparse files).
func gnuSparse(t *testing.T) []byte {
	b := rawTar(t, []tarEntry{file(pfx+"s", "")})
	b[156] = tar.TypeGNUSparse
	copy(b[257:265], "ustar  \x00") // GNU magic, so the reader takes the sparse map
	var sum int64
	for i := range 512 {
		if i >= 148 && i < 156 {
			sum += ' '
		} else {
			sum += int64(b[i])
		}
	}
	copy(b[148:156], octal(sum))
	return b
}

func octal(n int64) string {
	s := []byte("0000000\x00")
	for i := 6; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%8)
		n /= 8
	}
	return string(s)
}

func FuzzUnpack(f *testing.F) {
	seeds := [][]tarEntry{
		{file(pfx+"a", "1")},
		{dir(pfx), file(pfx+"src/lib.rs", "x")},
		{file(pfx+"../x", "1")},
		{file(pfx+"A", "1"), file(pfx+"a", "1")},
	}
	for _, s := range seeds {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range s {
			h := e.hdr
			_ = tw.WriteHeader(&h)
			_, _ = io.WriteString(tw, e.body)
		}
		_ = tw.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, tarBytes []byte) {
		archive := gz(t, tarBytes)
		parent := t.TempDir()
		out := filepath.Join(parent, "out")
		err := Unpack(bytes.NewReader(archive), int64(len(archive)), out, UnpackOptions{Prefix: pfx, MaxTotalBytes: 4 << 20})
		entries, _ := os.ReadDir(parent)
		if err != nil {
			if len(entries) != 0 {
				t.Fatalf("failed unpack left %d entries in the parent", len(entries))
			}
			return
		}
		if len(entries) != 1 || entries[0].Name() != "out" {
			t.Fatalf("successful unpack left %v in the parent", entries)
		}
		_ = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
				t.Fatalf("unpack created %s with mode %v", p, fi.Mode())
			}
			return nil
		})
	})
}
