package cratesio

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedIndexLinesAreExplained: an index file whose lines are all
// refused must say how many lines were found and why each kind was
// refused, never end in a bare "crate not found". The index and the crate
// are real, served from 127.0.0.1; only the index file's lines are spoiled.
func TestRefusedIndexLinesAreExplained(t *testing.T) {
	const name = "yolop-extension-echo"
	goodIndex := t.TempDir()
	publishCrate(t, goodIndex, name, "0.1.0", echoFiles("0.1.0"))
	rel := filepath.FromSlash(IndexPath(name))
	good, err := os.ReadFile(filepath.Join(goodIndex, rel))
	if err != nil {
		t.Fatal(err)
	}
	goodLine := strings.TrimSpace(string(good))
	spoil := func(old, new string) string {
		if !strings.Contains(goodLine, old) {
			t.Fatalf("index line %s has no %s", goodLine, old)
		}
		return strings.Replace(goodLine, old, new, 1)
	}
	cksum := goodLine[strings.Index(goodLine, `"cksum":"`)+9:][:64]
	badCksum := spoil(cksum, strings.ToUpper(cksum[:10])+cksum[10:])
	badVers := spoil(`"vers":"0.1.0"`, `"vers":"0.1"`)
	tooNew := strings.Replace(spoil(`"vers":"0.1.0"`, `"vers":"0.1.2"`), `"v":1`, `"v":3`, 1)
	yanked := spoil(`"vers":"0.1.0"`, `"vers":"0.1.3"`)
	yanked = strings.Replace(yanked, `"yanked":false`, `"yanked":true`, 1)
	wrongCase := spoil(`"name":"`+name+`"`, `"name":"Yolop-Extension-Echo"`)

	cases := []struct {
		name  string
		lines []string
		req   string
		want  error
		wants []string
	}{
		{
			name:  "one bad checksum",
			lines: []string{badCksum},
			want:  ErrNoMatch,
			wants: []string{"found 1 version, refused: checksum field malformed", "line 1", "not 64 lowercase hex digits", IndexPath(name)},
		},
		{
			name:  "every kind",
			lines: []string{`{broken`, badCksum, badVers, tooNew, yanked, wrongCase},
			want:  ErrNoMatch,
			wants: []string{
				"found 6 versions, refused:",
				"1 malformed JSON (line 1",
				"1 checksum field malformed (line 2",
				"1 unsupported version syntax (line 3",
				"1 index format too new (line 4",
				"1 yanked (0.1.3)",
				"1 wrong name (line 6",
			},
		},
		{
			name:  "two bad checksums",
			lines: []string{badCksum, strings.Replace(badCksum, `"vers":"0.1.0"`, `"vers":"0.1.1"`, 1)},
			want:  ErrNoMatch,
			wants: []string{"found 2 versions, refused: 2 checksum field malformed (lines 1, 2"},
		},
		{
			name:  "only a case variant",
			lines: []string{wrongCase},
			want:  ErrNotFound,
			wants: []string{"found 1 version, refused: wrong name", `"Yolop-Extension-Echo"`, `did you mean "Yolop-Extension-Echo"?`},
		},
		{
			name:  "a usable version that does not match",
			lines: []string{badCksum, spoil(`"vers":"0.1.0"`, `"vers":"0.2.0"`)},
			req:   "^0.1",
			want:  ErrNoMatch,
			wants: []string{`requirement "^0.1"`, "found 2 versions, refused: 1 checksum field malformed (line 1", "available: 0.2.0"},
		},
	}
	static := ServeIndex(goodIndex)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Join(tc.lines, "\n") + "\n"
			reg, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/"+IndexPath(name) {
					w.Write([]byte(body))
					return
				}
				static.ServeHTTP(w, r)
			}))
			_, err := NewClient(fastOptions(reg)).Resolve(context.Background(), name, tc.req, "")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Resolve = %v, want %v", err, tc.want)
			}
			t.Log(err)
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%s", w, err)
				}
			}
		})
	}
}
