package guardrailext

import (
	"fmt"
	"strings"
	"testing"
)

// show renders targets compactly: path, "*" when a glob, "(via)", and for
// cp/mv the sources ("<-a,b") and "-t" when into a directory.
func show(ts []Target) string {
	var parts []string
	for _, t := range ts {
		s := t.Path
		if t.Glob {
			s += "*"
		}
		s += "(" + t.Via + ")"
		if t.Sources != nil {
			var src []string
			for _, x := range t.Sources {
				src = append(src, x.Path)
			}
			s += "<-" + strings.Join(src, ",")
		}
		if t.Into {
			s += "-t"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestBashTargets pins how commands are read: what is a target, how cd
// and subshells move the directory, and what is left out as unknowable.
func TestBashTargets(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"echo a > x; echo b >> y && echo c >| z || echo d &> v | echo e &>> w", "x(output redirection) y(output redirection) z(output redirection) v(output redirection) w(output redirection)"},
		{"cmd 2>err.log 1>out.log 2>&1 >&- <in.txt 3<>rw", "err.log(output redirection) out.log(output redirection) rw(output redirection)"},
		{"cmd >& both.log", "both.log(output redirection)"},
		{"echo 2 > two; echo a2>b", "two(output redirection) b(output redirection)"},
		{`echo "a b">'c d'`, "c d(output redirection)"},
		{`echo x > "2"`, "2(output redirection)"},
		{"cat <<EOF >a\n> not a target\nEOF\necho >b", "a(output redirection) b(output redirection)"},
		{"cat <<-\"END\" >a\n\t> no\n\tEND\necho >b", "a(output redirection) b(output redirection)"},
		{"cat <<< 'x > y' > z", "z(output redirection)"},
		{"tee -a a b -- -c", "a(tee) b(tee) -c(tee)"},
		{"/usr/bin/tee a", "a(tee)"},
		{"sed -i -e s/a/b/ -f script.sed a b", "a(sed -i) b(sed -i)"},
		{"sed --expression=s/a/b/ --in-place a", "a(sed -i)"},
		{"sed -ie s/a/b/ a", "a(sed -i)"},
		{"sed -n -i s/a/b/ a", "a(sed -i)"},
		{"sed s/a/b/ a", ""},
		{"cp -r -S .bak a b dst", "dst(cp)<-a,b"},
		{"mv --target-directory=d a b", "d(mv)<-a,b-t"},
		{"cp -td a", "d(cp)<-a-t"},
		{"cp a", ""},
		{"truncate --size 0 a -r ref b", "a(truncate) b(truncate)"},
		{"dd if=a of=b bs=1", "b(dd of=)"},
		{"cd d && echo > a; cd /abs && echo > b; cd && echo > c; echo > /e", "d/a(output redirection) /abs/b(output redirection) /e(output redirection)"},
		{"cd -P d; (cd e; echo > a); echo > b", "d/e/a(output redirection) d/b(output redirection)"},
		{"cd d/../e; echo > a", "e/a(output redirection)"},
		{"X=1 Y=$(pwd) env -i sudo -E nohup tee a", "a(tee)"},
		{"while read l; do echo $l >> a; done < in", "a(output redirection)"},
		{"{ echo x; } > a", "a(output redirection)"},
		{"echo > gen/*.go > 'gen/*.go'", "gen/*.go*(output redirection) gen/*.go(output redirection)"},
		{`echo > $f > ${f} > "$(pwd)/a" > ` + "`pwd`" + `/a > ~/a > $'a'`, ""},
		{`$CMD -i a; "$(which tee)" a`, ""},
		{"echo \\\n > a", "a(output redirection)"},
		{"echo '> a' \"> b\" \\> c # > d", ""},
		{"echo x >", ""},
		{"echo 'unterminated > a", ""},
		{`echo "unterminated > a`, ""},
		{"echo $((1+2)) > a", "a(output redirection)"},
	} {
		if got := show(BashTargets(tc.command)); got != tc.want {
			t.Errorf("BashTargets(%q)\n got %s\nwant %s", tc.command, got, tc.want)
		}
	}
}

// FuzzBashTargets runs the command reader over arbitrary input: it must
// end, never panic, and never name an empty path.
func FuzzBashTargets(f *testing.F) {
	for _, s := range []string{
		"echo x > a", "cat <<EOF >a\nb\nEOF", "sed -i s/a/b/ a", "cp -t d a b", "cd d && (cd e; tee a)",
		`echo "$(a "b" 'c')" > $'d'`, "echo ${a:-}} >&2 2>&1 &>> b", "\\", "'", "\"", "$", "`", "<<", "cd", "2>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		for _, tg := range BashTargets(command) {
			if tg.Path == "" || tg.Via == "" {
				t.Fatalf("BashTargets(%q): target %s", command, fmt.Sprint(tg))
			}
		}
	})
}
