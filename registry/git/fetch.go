package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Default limits applied when the corresponding [Options] field is zero.
const (
	DefaultMaxFiles      = 10_000
	DefaultMaxTotalBytes = 256 << 20
	DefaultMaxFetchBytes = 1 << 30
)

// fetchPoll is how often the size of the object store is checked while a
// fetch is running.
const fetchPoll = 50 * time.Millisecond

// maxListedRefs bounds how many advertised references a full fetch asks for
// when a commit is not at the tip of any reference.
const maxListedRefs = 2000

// wantRef is the local name the requested reference is fetched into. Remote
// reference names are never used as local names, so a crafted name such as
// refs/heads/../../config cannot reach the file system.
const wantRef = plumbing.ReferenceName("refs/yolop/want")

// Options configures [Fetch], [ResolveOnly] and [CheckPinned]. The zero value
// is the production policy: https and ssh only, default caps.
type Options struct {
	// AllowInsecureHTTP accepts http:// URLs. Zero value: refused. Meant for
	// tests against a server on 127.0.0.1.
	AllowInsecureHTTP bool
	// AllowFile accepts file:// URLs. Zero value: refused. Meant for tests;
	// go-git's file transport runs the system git-upload-pack.
	AllowFile bool
	// Auth authenticates to the remote. Zero value: anonymous over https;
	// over ssh, go-git's default (ssh-agent, host keys checked against
	// known_hosts).
	Auth transport.AuthMethod
	// MaxFiles caps the number of files and directories exported.
	// Zero value: [DefaultMaxFiles].
	MaxFiles int
	// MaxTotalBytes caps the summed size of exported files.
	// Zero value: [DefaultMaxTotalBytes].
	MaxTotalBytes int64
	// MaxFetchBytes caps the size of the object store on disk while
	// fetching; a fetch that grows past it is cancelled. The store is
	// polled, so a fast server may overshoot by one poll interval before the
	// cancellation lands; the size is checked again once the fetch returns.
	// Zero value: [DefaultMaxFetchBytes].
	MaxFetchBytes int64
	// OpenPGPKeys supplies the public key that verifies an OpenPGP-signed
	// commit or tag (see signature.go). Nil: OpenPGP signatures are
	// recorded by key id, unverified. SSH signatures need no key source.
	OpenPGPKeys OpenPGPKeys
}

func (o Options) maxFetchBytes() int64 {
	if o.MaxFetchBytes > 0 {
		return o.MaxFetchBytes
	}
	return DefaultMaxFetchBytes
}

func (o Options) maxFiles() int {
	if o.MaxFiles > 0 {
		return o.MaxFiles
	}
	return DefaultMaxFiles
}

func (o Options) maxTotalBytes() int64 {
	if o.MaxTotalBytes > 0 {
		return o.MaxTotalBytes
	}
	return DefaultMaxTotalBytes
}

// Result describes what a revision resolved to.
type Result struct {
	// Commit is the full 40-hex commit id; record it to pin the package.
	Commit string
	// Ref is what the revision resolved through: a full reference name such
	// as refs/heads/main or refs/tags/v1.2.0, "HEAD" when the remote
	// advertises no symbolic target, or the commit itself when a commit id
	// was given.
	Ref string
	// SkippedSubmodules lists the slash-separated paths of gitlink entries
	// (submodules) that were not fetched. Empty for [ResolveOnly].
	SkippedSubmodules []string
	// Signer is the verified signer of the commit, or of the annotated
	// tag it was resolved through; nil when neither is signed. A
	// signature that does not verify fails the call with
	// [ErrBadSignature] instead.
	Signer *Signer
}

// Fetch resolves rev at the git repository rawURL and exports the commit's
// tree into dest, which must be absent or an empty directory whose parent
// exists. An empty rev means the remote's HEAD; otherwise rev is a branch, a
// tag (annotated tags are peeled), a full reference name, or a full 40-hex
// commit id. A short commit id is refused as ambiguous.
//
// Objects are fetched into a bare repository in a ".tmp-*" directory beside
// dest, and the tree is written there too, then renamed onto dest. On any
// error that directory is removed and dest is left as it was.
func Fetch(ctx context.Context, rawURL, rev, dest string, opts Options) (res Result, err error) {
	u, err := ValidateURL(rawURL, opts)
	if err != nil {
		return Result{}, err
	}
	if err := checkRev(rawURL, rev); err != nil {
		return Result{}, err
	}
	dest = filepath.Clean(dest)
	if err := checkDest(dest); err != nil {
		return Result{}, err
	}
	staging, err := os.MkdirTemp(filepath.Dir(dest), ".tmp-git-"+filepath.Base(dest)+"-")
	if err != nil {
		return Result{}, fmt.Errorf("git install into %s: create staging directory: %w", dest, err)
	}
	defer func() {
		if rmErr := os.RemoveAll(staging); rmErr != nil && err == nil {
			err = fmt.Errorf("git install into %s: remove staging directory %s: %w", dest, staging, rmErr)
		}
	}()

	s, err := newSession(u, rawURL, filepath.Join(staging, "repo.git"), opts)
	if err != nil {
		return Result{}, err
	}
	commit, ref, err := s.resolve(ctx, rev)
	if err != nil {
		return Result{}, err
	}
	signer, err := s.signer(commit)
	if err != nil {
		return Result{}, err
	}
	tree := filepath.Join(staging, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return Result{}, fmt.Errorf("git install into %s: %w", dest, err)
	}
	ex := &exporter{ctx: ctx, st: s.repo.Storer, root: tree, maxFiles: opts.maxFiles(), maxBytes: opts.maxTotalBytes()}
	if err := ex.export(commit); err != nil {
		return Result{}, fmt.Errorf("git install of %s at %s (commit %s): %w", s.shown, revName(rev), commit.Hash, err)
	}
	// syscall.Rename, unlike os.Rename, atomically replaces an empty
	// directory at dest; a non-empty one makes it fail.
	if err := syscall.Rename(tree, dest); err != nil {
		return Result{}, fmt.Errorf("git install of %s: move the exported tree into %s: %w", s.shown, dest, err)
	}
	syncDir(filepath.Dir(dest))
	return Result{Commit: commit.Hash.String(), Ref: ref, SkippedSubmodules: ex.skipped, Signer: signer}, nil
}

// ResolveOnly resolves rev at rawURL exactly as [Fetch] does and returns the
// commit without exporting anything, so that an update can compare it with
// the pinned commit. Fetched objects go to a temporary directory that is
// removed before returning.
func ResolveOnly(ctx context.Context, rawURL, rev string, opts Options) (Result, error) {
	u, err := ValidateURL(rawURL, opts)
	if err != nil {
		return Result{}, err
	}
	if err := checkRev(rawURL, rev); err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "yolop-git-")
	if err != nil {
		return Result{}, fmt.Errorf("git resolve of %s: create temporary directory: %w", RedactURL(rawURL), err)
	}
	defer os.RemoveAll(dir)
	s, err := newSession(u, rawURL, dir, opts)
	if err != nil {
		return Result{}, err
	}
	commit, ref, err := s.resolve(ctx, rev)
	if err != nil {
		return Result{}, err
	}
	signer, err := s.signer(commit)
	if err != nil {
		return Result{}, err
	}
	return Result{Commit: commit.Hash.String(), Ref: ref, Signer: signer}, nil
}

// CheckPinned reports whether the full 40-hex commit is still reachable from
// a branch or tag at rawURL. A commit that is gone (a force-push, a deleted
// branch) is an error wrapping [ErrPinnedCommitMissing]; callers must then
// ask the user to re-resolve and re-approve, never re-resolve silently.
func CheckPinned(ctx context.Context, rawURL, commit string, opts Options) error {
	if !isHex(commit) || len(commit) != 40 {
		return fmt.Errorf("%w: %q is not a full 40-hex commit id", ErrInvalidRev, commit)
	}
	_, err := ResolveOnly(ctx, rawURL, commit, opts)
	return err
}

// session is one remote plus the bare repository objects are fetched into.
type session struct {
	url    string // validated, passed to go-git
	shown  string // redacted, for messages
	gitDir string // the bare object store
	opts   Options
	repo   *gogit.Repository
	rem    *gogit.Remote
	refs   map[plumbing.ReferenceName]*plumbing.Reference
	// peeled maps an annotated tag's name to the commit it points at, when
	// the server advertised it.
	peeled map[plumbing.ReferenceName]plumbing.Hash
	// tag is the annotated tag the commit was peeled from, if any: its
	// signature counts when the commit carries none.
	tag *object.Tag
}

func newSession(u, raw, gitDir string, opts Options) (*session, error) {
	shown := RedactURL(raw)
	st := filesystem.NewStorage(osfs.New(gitDir, osfs.WithBoundOS()), cache.NewObjectLRUDefault())
	repo, err := gogit.Init(st, nil)
	if err != nil {
		return nil, fmt.Errorf("git fetch of %s: initialise bare repository in %s: %w", shown, gitDir, err)
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{u}})
	if err != nil {
		return nil, fmt.Errorf("git fetch of %s: configure remote: %w", shown, err)
	}
	return &session{url: u, shown: shown, gitDir: gitDir, opts: opts, repo: repo, rem: rem}, nil
}

// list reads the remote's advertised references.
func (s *session) list(ctx context.Context) error {
	refs, err := s.rem.ListContext(ctx, &gogit.ListOptions{Auth: s.opts.Auth, PeelingOption: gogit.AppendPeeled})
	if err != nil {
		return fmt.Errorf("git: list references of %s: %w (check the URL and your network or credentials)", s.shown, s.redactErr(err))
	}
	s.refs = make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	s.peeled = make(map[plumbing.ReferenceName]plumbing.Hash)
	for _, r := range refs {
		name := string(r.Name())
		if base, ok := strings.CutSuffix(name, "^{}"); ok {
			s.peeled[plumbing.ReferenceName(base)] = r.Hash()
			continue
		}
		s.refs[r.Name()] = r
	}
	return nil
}

// resolve finds the commit rev names and fetches it with its tree.
func (s *session) resolve(ctx context.Context, rev string) (*object.Commit, string, error) {
	if err := s.list(ctx); err != nil {
		return nil, "", err
	}
	if len(s.refs) == 0 {
		return nil, "", fmt.Errorf("%w: %s advertises no references (an empty repository?)", ErrRevNotFound, s.shown)
	}
	if isHex(rev) && len(rev) == 40 {
		rev = strings.ToLower(rev)
		c, err := s.fetchCommit(ctx, plumbing.NewHash(rev))
		return c, rev, err
	}
	name, err := s.pickRef(rev)
	if err != nil {
		return nil, "", err
	}
	c, err := s.fetchRef(ctx, name, rev)
	if err != nil {
		return nil, "", err
	}
	return c, string(name), nil
}

// pickRef maps rev to one advertised reference name.
func (s *session) pickRef(rev string) (plumbing.ReferenceName, error) {
	if rev == "" {
		head, ok := s.refs[plumbing.HEAD]
		if !ok {
			return "", fmt.Errorf("%w: %s advertises no HEAD; name a branch or tag (%s)", ErrRevNotFound, s.shown, s.available())
		}
		if head.Type() == plumbing.SymbolicReference {
			if _, ok := s.refs[head.Target()]; ok {
				return head.Target(), nil
			}
		}
		return plumbing.HEAD, nil
	}
	if strings.HasPrefix(rev, "refs/") {
		if _, ok := s.refs[plumbing.ReferenceName(rev)]; ok {
			return plumbing.ReferenceName(rev), nil
		}
		return "", s.notFound(rev)
	}
	branch, tag := plumbing.NewBranchReferenceName(rev), plumbing.NewTagReferenceName(rev)
	_, isBranch := s.refs[branch]
	_, isTag := s.refs[tag]
	switch {
	case isBranch && isTag:
		return "", fmt.Errorf("%w: %q at %s is both a branch and a tag; write %s or %s", ErrAmbiguousRev, rev, s.shown, branch, tag)
	case isBranch:
		return branch, nil
	case isTag:
		return tag, nil
	}
	if isHex(rev) && len(rev) >= 4 && len(rev) < 40 {
		return "", s.shortSHA(rev)
	}
	if isHex(rev) && len(rev) == 64 {
		return "", fmt.Errorf("%w: %q looks like a SHA-256 commit id; SHA-256 repositories are not supported", ErrInvalidRev, rev)
	}
	return "", s.notFound(rev)
}

// shortSHA refuses an abbreviated commit id, suggesting the full id when
// exactly one advertised tip starts with it.
func (s *session) shortSHA(rev string) error {
	matches := map[string]bool{}
	for name, r := range s.refs {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Hash().String(), strings.ToLower(rev)) {
			matches[r.Hash().String()] = true
		}
		if h, ok := s.peeled[name]; ok && strings.HasPrefix(h.String(), strings.ToLower(rev)) {
			matches[h.String()] = true
		}
	}
	hint := "give the full 40-hex commit id"
	if len(matches) == 1 {
		for full := range matches {
			hint = fmt.Sprintf("did you mean %s? give the full 40-hex commit id", full)
		}
	}
	return fmt.Errorf("%w: %q at %s is a short commit id, which can match more than one object; %s", ErrAmbiguousRev, rev, s.shown, hint)
}

func (s *session) notFound(rev string) error {
	return fmt.Errorf("%w: %q at %s is not a branch, tag or commit there (%s)", ErrRevNotFound, rev, s.shown, s.available())
}

// available lists a few advertised branches and tags for an error message.
func (s *session) available() string {
	var branches, tags []string
	for name := range s.refs {
		switch {
		case name.IsBranch():
			branches = append(branches, name.Short())
		case name.IsTag():
			tags = append(tags, name.Short())
		}
	}
	return "branches: " + few(branches) + "; tags: " + few(tags)
}

func few(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	const n = 8
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// fetchRef fetches one advertised reference at depth 1 and peels it to a
// commit.
func (s *session) fetchRef(ctx context.Context, name plumbing.ReferenceName, rev string) (*object.Commit, error) {
	spec := config.RefSpec("+" + string(name) + ":" + string(wantRef))
	if err := s.fetch(ctx, []config.RefSpec{spec}, 1); err != nil {
		return nil, fmt.Errorf("git: fetch %s (%s) from %s: %w", revName(rev), name, s.shown, err)
	}
	r, err := s.repo.Storer.Reference(wantRef)
	if err != nil {
		return nil, fmt.Errorf("git: fetch %s from %s: the reference did not arrive: %w", name, s.shown, err)
	}
	return s.peel(r.Hash(), name)
}

// fetchCommit fetches a commit by id: at depth 1 through a reference that
// points at it, else by id if the server allows it, else by fetching every
// branch and tag and looking for it.
func (s *session) fetchCommit(ctx context.Context, h plumbing.Hash) (*object.Commit, error) {
	for name, r := range s.refs {
		if (r.Type() == plumbing.HashReference && r.Hash() == h) || s.peeled[name] == h {
			if err := s.fetch(ctx, []config.RefSpec{config.RefSpec("+" + string(name) + ":" + string(wantRef))}, 1); err == nil {
				return s.peel(h, name)
			} else if ctx.Err() != nil || errors.Is(err, ErrTooLarge) {
				return nil, fmt.Errorf("git: fetch commit %s from %s: %w", h, s.shown, err)
			}
			break
		}
	}
	exact := config.RefSpec(h.String() + ":" + string(wantRef))
	if err := s.fetch(ctx, []config.RefSpec{exact}, 1); err == nil {
		return s.peel(h, plumbing.ReferenceName(h.String()))
	} else if ctx.Err() != nil || errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("git: fetch commit %s from %s: %w", h, s.shown, err)
	}
	// The server does not serve unadvertised commits: fetch all branches
	// and tags, each into a local name we choose.
	var specs []config.RefSpec
	var names []string
	for name, r := range s.refs {
		if (name.IsBranch() || name.IsTag()) && r.Type() == plumbing.HashReference && name.Validate() == nil {
			names = append(names, string(name))
		}
	}
	sort.Strings(names)
	if len(names) > maxListedRefs {
		names = names[:maxListedRefs]
	}
	for i, name := range names {
		specs = append(specs, config.RefSpec(fmt.Sprintf("+%s:refs/yolop/all/%d", name, i)))
	}
	if len(specs) > 0 {
		if err := s.fetch(ctx, specs, 0); err != nil {
			return nil, fmt.Errorf("git: fetch branches and tags of %s to look for commit %s: %w", s.shown, h, err)
		}
	}
	c, err := s.repo.CommitObject(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: %w: commit %s is not reachable from any branch or tag of %s (force-pushed or deleted upstream?); re-resolve the source and review it again", ErrPinnedCommitMissing, ErrRevNotFound, h, s.shown)
	}
	if err != nil {
		return nil, fmt.Errorf("git: read commit %s from %s: %w", h, s.shown, err)
	}
	return c, nil
}

// fetch runs one fetch while a watcher cancels it if the object store grows
// past [Options.MaxFetchBytes].
func (s *session) fetch(ctx context.Context, specs []config.RefSpec, depth int) error {
	limit := s.opts.maxFetchBytes()
	tooLarge := func(size int64) error {
		return fmt.Errorf("%w: the objects fetched from %s take more than %d bytes (at least %d)", ErrTooLarge, s.shown, limit, size)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(fetchPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if size := dirSize(s.gitDir); size > limit {
					cancel(tooLarge(size))
					return
				}
			}
		}
	}()
	err := s.rem.FetchContext(ctx, &gogit.FetchOptions{
		RefSpecs: specs,
		Depth:    depth,
		Tags:     gogit.NoTags,
		Auth:     s.opts.Auth,
		Force:    true,
	})
	close(done)
	wg.Wait()
	if cause := context.Cause(ctx); errors.Is(cause, ErrTooLarge) {
		return cause
	}
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return s.redactErr(err)
	}
	if size := dirSize(s.gitDir); size > limit {
		return tooLarge(size)
	}
	return nil
}

// dirSize sums the sizes of the regular files under dir, ignoring errors
// (files come and go while a fetch runs).
func dirSize(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// peel follows annotated tags from h to a commit.
func (s *session) peel(h plumbing.Hash, via plumbing.ReferenceName) (*object.Commit, error) {
	for range 10 {
		obj, err := s.repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return nil, fmt.Errorf("git: read object %s (from %s at %s): %w", h, via, s.shown, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o, nil
		case *object.Tag:
			if s.tag == nil {
				s.tag = o
			}
			h = o.Target
		default:
			return nil, fmt.Errorf("%w: %s at %s points at a %s, not a commit", ErrInvalidRev, via, s.shown, obj.Type())
		}
	}
	return nil, fmt.Errorf("%w: %s at %s: too many nested tags", ErrInvalidRev, via, s.shown)
}

// redactErr rewrites go-git errors that may quote the URL with its password.
func (s *session) redactErr(err error) error {
	if err == nil || s.url == s.shown {
		return err
	}
	return redactedError{err: err, raw: s.url, shown: s.shown}
}

type redactedError struct {
	err        error
	raw, shown string
}

func (e redactedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.raw, e.shown) }
func (e redactedError) Unwrap() error { return e.err }

// checkRev refuses revisions that are neither a hash nor a valid ref name.
func checkRev(rawURL, rev string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q for %s: %s", ErrInvalidRev, rev, RedactURL(rawURL), why)
	}
	if len(rev) > 255 {
		return bad("a revision is at most 255 bytes")
	}
	if rev == "" || isHex(rev) {
		return nil
	}
	if strings.HasPrefix(rev, "-") {
		return bad("a revision may not start with '-'")
	}
	name := plumbing.ReferenceName(rev)
	if !strings.HasPrefix(rev, "refs/") {
		name = plumbing.NewBranchReferenceName(rev)
	}
	if name.Validate() != nil {
		return bad("not a valid branch, tag or reference name (see git check-ref-format)")
	}
	return nil
}

func checkDest(dest string) error {
	fi, err := os.Lstat(dest)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("git install into %s: %w", dest, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s exists and is not a directory; remove it first", ErrDestNotEmpty, dest)
	default:
		entries, err := os.ReadDir(dest)
		if err != nil {
			return fmt.Errorf("git install into %s: %w", dest, err)
		}
		if len(entries) > 0 {
			return fmt.Errorf("%w: %s has %d entries; install into an empty or absent directory", ErrDestNotEmpty, dest, len(entries))
		}
	}
	parent := filepath.Dir(dest)
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("git install into %s: parent directory %s must exist: %v", dest, parent, err)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func revName(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return fmt.Sprintf("%q", rev)
}
