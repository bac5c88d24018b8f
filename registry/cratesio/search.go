package cratesio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"yolop.dev/packaging"
)

// ErrNoAPI is wrapped by [Client.Search] for a registry whose config.json
// names no web API (a static index, such as one `yolop registry publish`
// writes): it can resolve and download, not search.
var ErrNoAPI = errors.New("the registry has no search API")

// A SearchResult is one crate a registry's search found.
type SearchResult struct {
	// Name is the crate name; Extension the extension name it installs
	// as (Name without the yolop-extension- prefix).
	Name      string `json:"name"`
	Extension string `json:"extension"`
	// Version is the newest version.
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// MaxSearchResults bounds what [Client.Search] asks a registry for.
const MaxSearchResults = 100

// Search asks the registry's web API (the "api" of its config.json,
// crates.io-compatible: GET {api}/api/v1/crates?q=…) for yolop extensions
// matching term: crates named yolop-extension-*, the only ones the host can
// install by extension name. limit bounds the results (0 means 20). A
// registry without an API fails with [ErrNoAPI].
func (c *Client) Search(ctx context.Context, term string, limit int) ([]SearchResult, error) {
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, MaxSearchResults)
	cfg, err := c.Config(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.API == "" {
		return nil, fmt.Errorf("searching %s: %w (its config.json names no \"api\"); look the extension up where it is published, or install it by name", c.Registry(), ErrNoAPI)
	}
	api, err := url.Parse(strings.TrimSuffix(cfg.API, "/") + "/api/v1/crates")
	if err != nil || (api.Scheme != "https" && api.Scheme != "http") {
		return nil, fmt.Errorf("searching %s: the api %q in its config.json is not an http(s) URL", c.Registry(), cfg.API)
	}
	q := strings.TrimSpace(term)
	if !strings.HasPrefix(q, packaging.CratePrefix) {
		q = strings.TrimSpace(packaging.CratePrefix + " " + q)
	}
	api.RawQuery = url.Values{"q": {q}, "per_page": {strconv.Itoa(MaxSearchResults)}}.Encode()
	var body struct {
		Crates []struct {
			Name        string `json:"name"`
			MaxVersion  string `json:"max_version"`
			NewestVer   string `json:"newest_version"`
			Description string `json:"description"`
		} `json:"crates"`
	}
	err = c.request(ctx, "search", api.String(), c.authHeader(cfg.AuthRequired), func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: search: %s returned HTTP %s", ErrHTTP, api, resp.Status)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxIndex()+1))
		if err != nil {
			return bodyReadError(err)
		}
		if int64(len(b)) > c.maxIndex() {
			return fmt.Errorf("%w: the search answer from %s is larger than %d bytes", ErrTooLarge, api, c.maxIndex())
		}
		if err := json.Unmarshal(b, &body); err != nil {
			return fmt.Errorf("%w: the search answer from %s is not the crates.io shape: %v", ErrHTTP, api, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := []SearchResult{}
	for _, cr := range body.Crates {
		ext, ok := strings.CutPrefix(cr.Name, packaging.CratePrefix)
		if !ok || ext == "" {
			continue
		}
		v := cr.MaxVersion
		if v == "" {
			v = cr.NewestVer
		}
		out = append(out, SearchResult{Name: cr.Name, Extension: ext, Version: v, Description: strings.TrimSpace(cr.Description)})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}
