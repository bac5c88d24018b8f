package coding

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"yolop.dev/core/yep"
)

// sniffLen is how much of a file is looked at to tell binary from text.
const sniffLen = 8000

func (c *Coding) readFile(_ context.Context, ws workspace, args json.RawMessage, _ func(string)) (yep.ToolResult, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decode("read_file", args, &a); err != nil {
		return failed(err), nil
	}
	if a.Path == "" {
		return failed(errors.New(`read_file needs {"path": "<file>"}`)), nil
	}
	t, err := ws.resolve(a.Path)
	if err != nil {
		return failed(err), nil
	}
	r, err := ws.openRoot()
	if err != nil {
		return failed(err), nil
	}
	defer r.Close()
	f, err := r.Open(t.rel)
	if err != nil {
		return failed(fmt.Errorf("read_file %s: %w", t.name, unwrapPath(err))), nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return failed(fmt.Errorf("read_file %s: %w", t.name, err)), nil
	} else if fi.IsDir() {
		return failed(fmt.Errorf("read_file %s: a directory; list it with list_files", t.name)), nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
		return failed(fmt.Errorf("read_file %s: a binary file; only text files can be read", t.name)), nil
	}
	first, limit := max(a.Offset, 1), a.Limit
	if limit <= 0 {
		limit = c.o.ReadLines
	}

	var out strings.Builder
	line, last := 0, 0 // the line being read; the last one returned
	capped, long, eof := false, false, false
	for !eof && !capped && line < first-1+limit {
		text, err := readLine(br, c.o.ReadCap+1)
		if err == io.EOF {
			eof = true
			if text == "" {
				break
			}
		} else if err != nil {
			return failed(fmt.Errorf("read_file %s: %w", t.name, err)), nil
		}
		line++
		if line < first {
			continue
		}
		if out.Len()+len(text) > c.o.ReadCap {
			capped = true
			if last > 0 {
				line-- // this line is left for the next call
				break
			}
			text, long = text[:c.o.ReadCap], true // one line longer than the cap: its head
		}
		out.WriteString(text)
		last = line
	}
	if !eof && !capped {
		if _, err := br.Peek(1); err == io.EOF {
			eof = true
		}
	}
	d := map[string]any{"path": t.name, "offset": first, "lines": max(last-first+1, 0)}
	switch {
	case line < first && first > 1:
		return failed(fmt.Errorf("read_file %s: offset %d is past the end: the file has %d lines", t.name, first, line)), nil
	case last == 0:
		out.WriteString("[empty file]")
	case long:
		fmt.Fprintf(&out, "\n[line %d is longer than %d bytes: only its head is shown; the file continues at offset=%d]", last, c.o.ReadCap, last+1)
		d["next_offset"] = last + 1
	case capped || !eof:
		if !strings.HasSuffix(out.String(), "\n") {
			out.WriteString("\n")
		}
		why := ""
		if capped {
			why = fmt.Sprintf(" (the %d-byte cap of one read)", c.o.ReadCap)
		}
		fmt.Fprintf(&out, "[lines %d-%d shown%s; the file continues: read on with offset=%d]", first, last, why, last+1)
		d["next_offset"] = last + 1
	}
	return yep.ToolResult{Output: out.String(), Data: data(d)}, nil
}

// readLine reads one line with its newline, keeping at most keep bytes of
// it (the rest is read and dropped). It returns io.EOF with the final line
// when the file does not end in a newline.
func readLine(br *bufio.Reader, keep int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := keep - len(b); room > 0 {
			b = append(b, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(b), err
	}
}

func (c *Coding) writeFile(_ context.Context, ws workspace, args json.RawMessage, _ func(string)) (yep.ToolResult, error) {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := decode("write_file", args, &a); err != nil {
		return failed(err), nil
	}
	if a.Path == "" || a.Content == nil {
		return failed(errors.New(`write_file needs {"path": "<file>", "content": "<text>"}`)), nil
	}
	t, err := ws.resolve(a.Path)
	if err != nil {
		return failed(err), nil
	}
	created, err := writeAtomic(ws, t, []byte(*a.Content))
	if err != nil {
		return failed(fmt.Errorf("write_file %s: %w", t.name, err)), nil
	}
	verb := "replaced"
	if created {
		verb = "created"
	}
	return yep.ToolResult{
		Output: fmt.Sprintf("%s %s (%d bytes)", verb, t.name, len(*a.Content)),
		Data:   data(map[string]any{"path": t.name, "bytes": len(*a.Content), "created": created}),
	}, nil
}

func (c *Coding) editFile(_ context.Context, ws workspace, args json.RawMessage, _ func(string)) (yep.ToolResult, error) {
	var a struct {
		Path       string `json:"path"`
		Old        string `json:"old_string"`
		New        string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := decode("edit_file", args, &a); err != nil {
		return failed(err), nil
	}
	if a.Path == "" || a.Old == "" {
		return failed(errors.New(`edit_file needs {"path": "<file>", "old_string": "<text>", "new_string": "<text>"} with a non-empty old_string`)), nil
	}
	if a.Old == a.New {
		return failed(errors.New("edit_file: old_string and new_string are the same; there is nothing to change")), nil
	}
	t, err := ws.resolve(a.Path)
	if err != nil {
		return failed(err), nil
	}
	r, err := ws.openRoot()
	if err != nil {
		return failed(err), nil
	}
	b, err := r.ReadFile(t.rel)
	r.Close()
	if err != nil {
		return failed(fmt.Errorf("edit_file %s: %w", t.name, unwrapPath(err))), nil
	}
	text := string(b)
	n := strings.Count(text, a.Old)
	switch {
	case n == 0:
		hint := "read the file and copy the text exactly, whitespace included"
		if strings.Contains(text, "\r\n") && strings.Contains(a.Old, "\n") && !strings.Contains(a.Old, "\r\n") {
			hint = "the file has CRLF line endings; old_string must have them too"
		}
		return failed(fmt.Errorf("edit_file %s: old_string does not occur in the file; %s", t.name, hint)), nil
	case n > 1 && !a.ReplaceAll:
		return failed(fmt.Errorf("edit_file %s: old_string occurs %d times; include more surrounding text to make it unique, or set replace_all to replace all %d", t.name, n, n)), nil
	}
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, a.Old, a.New)
	} else {
		text = strings.Replace(text, a.Old, a.New, 1)
	}
	if _, err := writeAtomic(ws, t, []byte(text)); err != nil {
		return failed(fmt.Errorf("edit_file %s: %w", t.name, err)), nil
	}
	plural := "s"
	if n == 1 {
		plural = ""
	}
	return yep.ToolResult{
		Output: fmt.Sprintf("edited %s: %d replacement%s", t.name, n, plural),
		Data:   data(map[string]any{"path": t.name, "replacements": n}),
	}, nil
}

// writeAtomic replaces t with b: it creates the missing parent directories,
// writes a temporary file beside t and renames it over t, so a reader sees
// the old content or the new, never a part. An existing file keeps its
// permission bits. Everything goes through an [os.Root] on the workspace.
func writeAtomic(ws workspace, t target, b []byte) (created bool, err error) {
	if t.rel == "." {
		return false, errors.New("that is the workspace root, a directory")
	}
	r, err := ws.openRoot()
	if err != nil {
		return false, err
	}
	defer r.Close()
	dir, base := filepath.Split(t.rel)
	if dir != "" {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return false, unwrapPath(err)
		}
	}
	mode := fs.FileMode(0o644)
	switch fi, err := r.Stat(t.rel); {
	case err == nil && fi.IsDir():
		return false, errors.New("a directory")
	case err == nil:
		mode = fi.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		created = true
	default:
		return false, unwrapPath(err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return false, unwrapPath(err)
	}
	defer func() {
		if err != nil {
			_ = r.Remove(tmp)
		}
	}()
	_, err = f.Write(b)
	if err == nil && !created {
		err = f.Chmod(mode) // the umask applied to OpenFile's mode
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := r.Rename(tmp, t.rel); err != nil {
		return false, unwrapPath(err)
	}
	return created, nil
}

// unwrapPath drops a *fs.PathError's path, which is relative to the
// resolved root and would only confuse: the caller names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
