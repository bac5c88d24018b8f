package cratesio

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// restricted to its serial path (no writer goroutines), with each
// directory's files sent to one writer (the policy before the shortest
// queue) and with GNU `tar -xzf`, in the same run, rotating which goes
// first, and reports MB/s for ours and tar and the time ratios ours/tar,
// serial/tar and bydir/tar (below 1.0 means faster than tar), each the
// median of the rounds' own ratios: the VM's disk can slow a whole round
// several times over, and a round's sides share what it did. The shapes:
// many small files (20,000 of ~250 bytes in 200 directories), mixed
// (3,000 files, ~64 MB, 50 directories) and few large (8 files of ~8 MB).
// Run it with
//
//	go test -run '^$' -bench Unpack -benchtime 7x ./registry/cratesio
//
// and with YOLOP_BENCH_UNPACK_DIR=/dev/shm to extract into a tmpfs
// instead of the test's temporary directory.
func BenchmarkUnpack(b *testing.B) {
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		b.Skip("GNU tar is not installed")
	}
	// Every tree stays until the whole benchmark is done: ext4 skips the
	// inodes it freed in the last half minute when it allocates, so
	// deleting a round's trees would slow the next round's file creation
	// for both sides, which no real install pays.
	work := b.TempDir()
	if dir := os.Getenv("YOLOP_BENCH_UNPACK_DIR"); dir != "" {
		// Another file system for the trees, such as a tmpfs, to measure
		// the extractors' CPU without the disk's writeback.
		var err error
		if work, err = os.MkdirTemp(dir, "unpack-bench-*"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(work) })
	}
	shapes := []struct {
		name               string
		files, dirs, bytes int
		crate              string
	}{
		{name: "small=20000", files: 20000, dirs: 200, bytes: 5 << 20},
		{name: "mixed=3000", files: 3000, dirs: 50, bytes: 64 << 20},
		{name: "large=8", files: 8, dirs: 1, bytes: 64 << 20},
	}
	// The crates too are built first, their sources kept to the end.
	for i := range shapes {
		shapes[i].crate = benchCrate(b, shapes[i].files, shapes[i].dirs, shapes[i].bytes)
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			dir, err := os.MkdirTemp(work, shape.name+"-*")
			if err != nil {
				b.Fatal(err)
			}
			benchUnpack(b, tarBin, shape.crate, dir)
		})
	}
}

// benchUnpack runs BenchmarkUnpack's rounds for one crate, extracting
// into work.
func benchUnpack(b *testing.B, tarBin, crate, work string) {
	fi, _ := os.Stat(crate)
	// The sides, in the order of rounds[i]; tar is the baseline.
	const ours, tar, serial, bydir = 0, 1, 2, 3
	var rounds [][4]time.Duration
	var unpacked int64
	parallel := numWriters
	defer func() { numWriters = parallel }()
	unpackWith := func(dest string, writers func() int) time.Duration {
		numWriters = writers
		f, err := os.Open(crate)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		start := time.Now()
		err = Unpack(f, fi.Size(), dest, UnpackOptions{Prefix: "big-1.0.0/"})
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	sides := [4]func(dest string) time.Duration{
		ours: func(dest string) time.Duration { return unpackWith(dest, parallel) },
		tar: func(dest string) time.Duration {
			os.Mkdir(dest, 0o755)
			start := time.Now()
			out, err := exec.Command(tarBin, "-xzf", crate, "-C", dest).CombinedOutput()
			d := time.Since(start)
			if err != nil {
				b.Fatalf("tar: %v: %s", err, out)
			}
			return d
		},
		serial: func(dest string) time.Duration { return unpackWith(dest, func() int { return 0 }) },
		bydir: func(dest string) time.Duration {
			byDirectory = true
			defer func() { byDirectory = false }()
			return unpackWith(dest, parallel)
		},
	}
	i := 0
	for b.Loop() {
		i++
		var round [4]time.Duration
		var dests [4]string
		// Alternate who goes first, so neither always pays for the
		// other's writeback or the previous round's deletes.
		for k := range sides {
			s := (i + k) % len(sides)
			dests[s] = filepath.Join(work, fmt.Sprintf("%d-%d", s, i))
			round[s] = sides[s](dests[s])
		}
		rounds = append(rounds, round)
		if unpacked == 0 {
			unpacked = treeSize(b, dests[ours])
		}
		// Write back what the round wrote, untimed, so that the next
		// round's sides do not pay for this one's writeback.
		b.StopTimer()
		syscall.Sync()
		b.StartTimer()
	}
	median := func(f func(r [4]time.Duration) float64) float64 {
		v := make([]float64, len(rounds))
		for k, r := range rounds {
			v[k] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	rate := func(side int) float64 {
		return median(func(r [4]time.Duration) float64 { return float64(unpacked) / 1e6 / r[side].Seconds() })
	}
	ratio := func(side int) float64 {
		return median(func(r [4]time.Duration) float64 { return r[side].Seconds() / r[tar].Seconds() })
	}
	b.ReportMetric(rate(ours), "MB/s")
	b.ReportMetric(rate(tar), "tar-MB/s")
	b.ReportMetric(ratio(ours), "ours/tar")
	b.ReportMetric(ratio(serial), "serial/tar")
	b.ReportMetric(ratio(bydir), "bydir/tar")
	// The worst round's ratio, so a single run shows its spread.
	b.ReportMetric(slices.Max(func() []float64 {
		v := make([]float64, len(rounds))
		for k, r := range rounds {
			v[k] = r[ours].Seconds() / r[tar].Seconds()
		}
		return v
	}()), "ours/tar-max")
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
