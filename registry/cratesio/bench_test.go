package cratesio

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchCrate writes a crate of about totalBytes uncompressed in nFiles
// text-like files (so gzip has real work to do) spread over nDirs
// directories, and returns its path.
func benchCrate(b *testing.B, nFiles, nDirs, totalBytes int) string {
	b.Helper()
	src := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("fn let mut impl struct enum match self return where use pub crate mod trait async await Some None Ok Err String Vec Option Result")
	per := totalBytes / nFiles
	for i := range nFiles {
		var sb strings.Builder
		n := per/2 + rng.IntN(per)
		for sb.Len() < n {
			sb.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(8) == 0 {
				fmt.Fprintf(&sb, "_%d\n", rng.IntN(1_000_000))
			} else {
				sb.WriteByte(' ')
			}
		}
		p := filepath.Join(src, fmt.Sprintf("src/m%03d/f%05d.rs", i%nDirs, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := WriteCrate(&buf, "big", "1.0.0", src); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "big-1.0.0.crate")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkUnpack extracts crates of three shapes with Unpack, with Unpack
// restricted to its serial path (no writer goroutines) and with GNU
// `tar -xzf`, in the same run, rotating which goes first, and reports MB/s
// for ours and the time ratios ours/tar, serial/tar (no writer goroutines)
// and bydir/tar (each directory's files to one writer, as before; below
// 1.0 means faster than tar): many small files (20,000 of ~250 bytes in 200 directories), mixed
// (3,000 files, ~64 MB, 50 directories) and few large (8 files of ~8 MB).
func BenchmarkUnpack(b *testing.B) {
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		b.Skip("GNU tar is not installed")
	}
	for _, shape := range []struct {
		name               string
		files, dirs, bytes int
	}{
		{"small=20000", 20000, 200, 5 << 20},
		{"mixed=3000", 3000, 50, 64 << 20},
		{"large=8", 8, 1, 64 << 20},
	} {
		b.Run(shape.name, func(b *testing.B) {
			benchUnpack(b, tarBin, benchCrate(b, shape.files, shape.dirs, shape.bytes))
		})
	}
}

func benchUnpack(b *testing.B, tarBin, crate string) {
	fi, _ := os.Stat(crate)
	work := b.TempDir()
	var ours, serial, bydir, theirs time.Duration
	var unpacked int64
	i := 0
	parallel := numWriters
	defer func() { numWriters = parallel }()
	unpackWith := func(dest string, writers func() int, into *time.Duration) {
		numWriters = writers
		f, err := os.Open(crate)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		start := time.Now()
		err = Unpack(f, fi.Size(), dest, UnpackOptions{Prefix: "big-1.0.0/"})
		*into += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	runOurs := func(dest string) { unpackWith(dest, parallel, &ours) }
	runByDir := func(dest string) {
		byDirectory = true
		defer func() { byDirectory = false }()
		unpackWith(dest, parallel, &bydir)
	}
	runSerial := func(dest string) { unpackWith(dest, func() int { return 0 }, &serial) }
	runTar := func(dest string) {
		os.Mkdir(dest, 0o755)
		start := time.Now()
		out, err := exec.Command(tarBin, "-xzf", crate, "-C", dest).CombinedOutput()
		theirs += time.Since(start)
		if err != nil {
			b.Fatalf("tar: %v: %s", err, out)
		}
	}
	for b.Loop() {
		i++
		dest := filepath.Join(work, fmt.Sprintf("ours-%d", i))
		tdest := filepath.Join(work, fmt.Sprintf("tar-%d", i))
		// Alternate who goes first, so neither always pays for the
		// other's writeback or the previous iteration's deletes.
		sdest := filepath.Join(work, fmt.Sprintf("serial-%d", i))
		ddest := filepath.Join(work, fmt.Sprintf("bydir-%d", i))
		runs := []func(){func() { runOurs(dest) }, func() { runTar(tdest) }, func() { runSerial(sdest) }, func() { runByDir(ddest) }}
		for k := range runs {
			runs[(i+k)%len(runs)]()
		}
		if unpacked == 0 {
			unpacked = treeSize(b, dest)
		}
		b.StopTimer()
		os.RemoveAll(dest)
		os.RemoveAll(tdest)
		os.RemoveAll(sdest)
		os.RemoveAll(ddest)
		// Write back what the round dirtied, untimed, so that the next
		// round's sides do not pay for this one's writeback.
		syscall.Sync()
		b.StartTimer()
	}
	b.ReportMetric(float64(unpacked)/1e6/(ours.Seconds()/float64(i)), "MB/s")
	b.ReportMetric(float64(unpacked)/1e6/(theirs.Seconds()/float64(i)), "tar-MB/s")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "ours/tar")
	b.ReportMetric(serial.Seconds()/theirs.Seconds(), "serial/tar")
	b.ReportMetric(bydir.Seconds()/theirs.Seconds(), "bydir/tar")
	b.ReportMetric(float64(fi.Size())/1e6, "crate-MB")
	b.ReportMetric(float64(unpacked)/1e6, "unpacked-MB")
}

func treeSize(b *testing.B, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkResolveWarm resolves a crate against a loopback registry with a
// warm cache, a fresh Client per iteration (so config.json is revalidated
// too). Every request must be answered 304: bodies/op reports how many
// responses carried a body and must be 0.
func BenchmarkResolveWarm(b *testing.B) {
	indexDir := b.TempDir()
	for i := range 50 {
		publishCrate(b, indexDir, "yolop-extension-echo", fmt.Sprintf("0.1.%d", i), map[string]string{"plugin.json": "{}"})
	}
	ch := &countingHandler{h: ServeIndex(indexDir)}
	reg, _ := serve(b, ch)
	opts := Options{Registry: reg, CacheDir: b.TempDir()}
	ctx := context.Background()
	if _, err := NewClient(opts).Resolve(ctx, "yolop-extension-echo", "^0.1", ""); err != nil {
		b.Fatal(err)
	}
	ch.bodies.Store(0)
	ch.requests.Store(0)
	n := 0
	for b.Loop() {
		n++
		rel, err := NewClient(opts).Resolve(ctx, "yolop-extension-echo", "^0.1", "")
		if err != nil || rel.Version != "0.1.49" {
			b.Fatal(rel.Version, err)
		}
	}
	b.ReportMetric(float64(ch.bodies.Load())/float64(n), "bodies/op")
	b.ReportMetric(float64(ch.requests.Load())/float64(n), "requests/op")
	if ch.bodies.Load() != 0 {
		b.Fatalf("a warm resolve downloaded %d bodies", ch.bodies.Load())
	}
}
