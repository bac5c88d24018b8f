package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/pelletier/go-toml/v2"
	"yolop.dev/internal/atomicfile"
)

// A Store holds extension secrets by extension name and field name. Its
// methods are safe for concurrent use by goroutines and processes.
type Store interface {
	// Get returns the secret of one field and whether it is set.
	Get(ctx context.Context, ext, field string) (Secret, bool, error)
	// Set stores the secret of one field, replacing any previous value.
	Set(ctx context.Context, ext, field string, v Secret) error
	// Delete removes one field's secret and reports whether it was set.
	Delete(ctx context.Context, ext, field string) (bool, error)
	// DeleteExtension removes every secret of an extension.
	DeleteExtension(ctx context.Context, ext string) error
	// Extension returns every secret of one extension, by field.
	Extension(ctx context.Context, ext string) (map[string]Secret, error)
	// All returns every extension's secrets: extension → field → secret.
	All(ctx context.Context) (map[string]map[string]Secret, error)
}

// Errors of the credential file, matched with errors.Is.
var (
	// ErrUnsafeFile: connections.toml is a symlink, not a regular file,
	// owned by another user, or readable by group or others. It is never
	// read in that state.
	ErrUnsafeFile = errors.New("unsafe credential file")
	// ErrCorrupt: connections.toml cannot be parsed. It is never treated
	// as empty (a write would lose every stored secret).
	ErrCorrupt = errors.New("corrupt credential file")
	// ErrInvalid: an empty extension name, field name or value.
	ErrInvalid = errors.New("invalid secret")
)

const (
	// FileName is the credential file inside the config directory.
	FileName = "connections.toml"
	// LockName is the file lock serialising writers.
	LockName = ".connections.lock"
	// KeyPrefix starts the table name of an extension's secrets.
	KeyPrefix = "ext:"
	// Mode is the only permission the credential file may have.
	Mode fs.FileMode = 0o600
)

// A File is the credential store in connections.toml.
type File struct {
	path, lockPath string
}

var _ Store = (*File)(nil)

// NewFile returns the store in configDir/connections.toml (created, with
// its directory, on the first write).
func NewFile(configDir string) *File {
	return &File{path: filepath.Join(configDir, FileName), lockPath: filepath.Join(configDir, LockName)}
}

// Path returns the path of connections.toml.
func (f *File) Path() string { return f.path }

// Get implements [Store].
func (f *File) Get(ctx context.Context, ext, field string) (Secret, bool, error) {
	m, err := f.Extension(ctx, ext)
	if err != nil {
		return Secret{}, false, err
	}
	s, ok := m[field]
	return s, ok, nil
}

// Extension implements [Store].
func (f *File) Extension(ctx context.Context, ext string) (map[string]Secret, error) {
	all, err := f.read()
	if err != nil {
		return nil, err
	}
	out := map[string]Secret{}
	for k, v := range all[KeyPrefix+ext] {
		out[k] = New(v)
	}
	return out, nil
}

// All implements [Store].
func (f *File) All(ctx context.Context) (map[string]map[string]Secret, error) {
	all, err := f.read()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]Secret{}
	for key, fields := range all {
		ext, ok := strings.CutPrefix(key, KeyPrefix)
		if !ok {
			continue
		}
		m := map[string]Secret{}
		for k, v := range fields {
			m[k] = New(v)
		}
		out[ext] = m
	}
	return out, nil
}

// Set implements [Store].
func (f *File) Set(ctx context.Context, ext, field string, v Secret) error {
	if ext == "" || field == "" {
		return fmt.Errorf("%w: extension and field names must not be empty", ErrInvalid)
	}
	if v.IsZero() {
		return fmt.Errorf("%w: the secret for %s.%s is empty; to remove it use `yolop ext secret unset %s %s`", ErrInvalid, ext, field, ext, field)
	}
	return f.update(ctx, func(all map[string]map[string]string) bool {
		key := KeyPrefix + ext
		if all[key] == nil {
			all[key] = map[string]string{}
		}
		all[key][field] = v.Reveal()
		return true
	})
}

// Delete implements [Store].
func (f *File) Delete(ctx context.Context, ext, field string) (bool, error) {
	deleted := false
	err := f.update(ctx, func(all map[string]map[string]string) bool {
		key := KeyPrefix + ext
		if _, ok := all[key][field]; !ok {
			return false
		}
		delete(all[key], field)
		if len(all[key]) == 0 {
			delete(all, key)
		}
		deleted = true
		return true
	})
	return deleted, err
}

// DeleteExtension implements [Store].
func (f *File) DeleteExtension(ctx context.Context, ext string) error {
	return f.update(ctx, func(all map[string]map[string]string) bool {
		if _, ok := all[KeyPrefix+ext]; !ok {
			return false
		}
		delete(all, KeyPrefix+ext)
		return true
	})
}

// read loads the file after checking it is safe. A missing file is empty.
func (f *File) read() (map[string]map[string]string, error) {
	fd, err := openNoFollow(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return map[string]map[string]string{}, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("%w: %s is a symlink; yolop reads credentials only from a regular file it owns. Replace the link with the file itself (then `chmod 600 %s`)", ErrUnsafeFile, f.path, f.path)
	case err != nil:
		return nil, fmt.Errorf("reading the credential file: %w", err)
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the credential file %s: %w", f.path, err)
	}
	if err := checkSafe(f.path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fd)
	if err != nil {
		return nil, fmt.Errorf("reading the credential file %s: %w", f.path, err)
	}
	all := map[string]map[string]string{}
	dec := toml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&all); err != nil {
		// The decoder's message may quote the offending line: a value.
		// Say where, never what.
		where := ""
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			where = fmt.Sprintf(" at line %d, column %d", row, col)
		}
		return nil, fmt.Errorf("%w: %s cannot be parsed%s; it must hold only [\"ext:<name>\"] tables of string values. Fix or remove it, then set the secrets again with `yolop ext secret set`", ErrCorrupt, f.path, where)
	}
	if all == nil {
		all = map[string]map[string]string{}
	}
	return all, nil
}

// checkSafe refuses a credential file that is not a regular file owned by
// the current user with mode 0600 (or stricter).
func checkSafe(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%s); remove it and set the secrets again with `yolop ext secret set`", ErrUnsafeFile, path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, so other users can read it; run `chmod 600 %s` (and consider rotating the secrets it holds)", ErrUnsafeFile, path, perm, path)
	}
	if err := checkOwner(path, fi); err != nil {
		return err
	}
	return nil
}

// update runs fn on the parsed file under the exclusive lock and, when fn
// reports a change, writes the result atomically.
func (f *File) update(ctx context.Context, fn func(map[string]map[string]string) bool) error {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the config directory %s: %w", dir, err)
	}
	fl := flock.New(f.lockPath)
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("waiting for the credential lock %s (another yolop is writing secrets?): %w", f.lockPath, err)
	}
	defer fl.Unlock()
	all, err := f.read()
	if err != nil {
		return err
	}
	if !fn(all) {
		return nil
	}
	data, err := encode(all)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, data, Mode); err != nil {
		return fmt.Errorf("the credential file: %w", err)
	}
	return nil
}

// encode renders the tables sorted by name.
func encode(all map[string]map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# yolop credential store: extension secrets, keyed ext:<name>.\n# Keep this file mode 0600. Manage it with `yolop ext secret`.\n")
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		one, err := toml.Marshal(map[string]map[string]string{k: all[k]})
		if err != nil {
			return nil, fmt.Errorf("encoding the credential table %q: %w", k, err)
		}
		b.WriteString("\n")
		b.Write(one)
	}
	return b.Bytes(), nil
}
