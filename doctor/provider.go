package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"yolop.dev/core/host"
)

// maxProviderBody bounds what doctor reads of one endpoint answer.
const maxProviderBody = 4 << 20

// checkProvider grades a server whose manifest offers a model provider:
// the handshake announces it (the clamp has already failed an unapproved
// model or a base URL off loopback), GET <baseUrl>/models lists every
// announced model, and a streamed chat completion for the first model
// answers an event stream of data: chunks ending in data: [DONE]. The
// endpoint is spoken to with net/http, as an OpenAI client would.
func (d *run) checkProvider(ctx context.Context) {
	pg := d.g.Provider
	if pg == nil {
		return
	}
	p, ok := d.ext.Provider()
	if !ok {
		why := "the server announced no provider in initialize: list \"provider\" in capabilities and give capability_params.provider {\"baseUrl\": \"http://127.0.0.1:<port>/v1\", \"models\": [...]}"
		if slices.ContainsFunc(d.ext.Refusals(), func(r host.Refusal) bool { return r.Kind == "provider" || r.Name == "provider" }) {
			why = "the runtime refused the announcement (see the clamp checks), so the agent gets no provider"
		}
		d.r.add(GroupProvider, "announce", Fail, "the manifest offers provider %s but %s", pg.Name, why)
		return
	}
	var ids []string
	for _, m := range p.Models {
		ids = append(ids, m.ID)
	}
	d.r.add(GroupProvider, "announce", Pass, "provider %s at %s serves %d of %d approved models: %s", p.Name, p.BaseURL, len(p.Models), len(pg.Models), strings.Join(ids, ", "))
	for _, m := range pg.Models {
		if _, ok := p.Model(m.ID); !ok {
			d.r.add(GroupProvider, "model "+m.ID, Warn, "approved in the manifest but not announced by the server: routing to it fails")
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	d.checkProviderModels(ctx, client, p)
	d.checkProviderChat(ctx, client, p)
}

// checkProviderModels grades GET <baseUrl>/models.
func (d *run) checkProviderModels(ctx context.Context, client *http.Client, p host.ProviderInfo) {
	url := strings.TrimRight(p.BaseURL, "/") + "/models"
	cctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	if err != nil {
		d.r.add(GroupProvider, "models", Fail, "GET %s: %v", url, err)
		return
	}
	resp, err := client.Do(req)
	if err != nil {
		d.r.add(GroupProvider, "models", Fail, "GET %s: %v; the server must serve its endpoint while it runs", url, err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderBody))
	if err != nil {
		d.r.add(GroupProvider, "models", Fail, "GET %s: reading the answer: %v", url, err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		d.r.add(GroupProvider, "models", Fail, "GET %s answered %s: %s; it must answer 200 with the model list", url, resp.Status, clip(string(body)))
		return
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		d.r.add(GroupProvider, "models", Fail, "GET %s answered %s, not an OpenAI model list {\"object\": \"list\", \"data\": [{\"id\": ...}]}: %v", url, clip(string(body)), err)
		return
	}
	var missing []string
	for _, m := range p.Models {
		if !slices.ContainsFunc(list.Data, func(e struct {
			ID string `json:"id"`
		}) bool {
			return e.ID == m.ID
		}) {
			missing = append(missing, m.ID)
		}
	}
	if len(missing) > 0 {
		d.r.add(GroupProvider, "models", Fail, "GET %s lists %d models but not the announced %s; list every model the handshake announces", url, len(list.Data), strings.Join(missing, ", "))
		return
	}
	d.r.add(GroupProvider, "models", Pass, "GET %s answered 200 listing every announced model", url)
}

// checkProviderChat grades a streamed chat completion for the first
// announced model.
func (d *run) checkProviderChat(ctx context.Context, client *http.Client, p host.ProviderInfo) {
	url := strings.TrimRight(p.BaseURL, "/") + "/chat/completions"
	model := p.Models[0].ID
	name := "chat " + model
	payload, _ := json.Marshal(map[string]any{
		"model":    model,
		"stream":   true,
		"messages": []map[string]string{{"role": "user", "content": "ping"}},
	})
	cctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		d.r.add(GroupProvider, name, Fail, "POST %s: %v", url, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		d.r.add(GroupProvider, name, Fail, "POST %s: %v", url, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		d.r.add(GroupProvider, name, Fail, "POST %s with \"stream\": true answered %s: %s", url, resp.Status, clip(string(body)))
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		d.r.add(GroupProvider, name, Fail, "POST %s with \"stream\": true answered Content-Type %q, not text/event-stream: %s; a streamed request must be answered with server-sent events",
			url, resp.Header.Get("Content-Type"), clip(string(body)))
		return
	}
	chunks, done, fault := readChatStream(io.LimitReader(resp.Body, maxProviderBody))
	switch {
	case fault != "":
		d.r.add(GroupProvider, name, Fail, "POST %s: %s", url, fault)
	case chunks == 0:
		d.r.add(GroupProvider, name, Fail, "POST %s streamed no data: chunk before it ended", url)
	case !done:
		d.r.add(GroupProvider, name, Fail, "POST %s streamed %d chunks but did not end with data: [DONE]; OpenAI clients wait for it", url, chunks)
	default:
		d.r.add(GroupProvider, name, Pass, "POST %s streamed %d chunks and data: [DONE]", url, chunks)
	}
}

// readChatStream reads server-sent events of a chat completion: it counts
// the data: chunks, each of which must be a JSON object, and reports
// whether the stream ended with data: [DONE] (and nothing after it), or
// what was wrong.
func readChatStream(r io.Reader) (chunks int, done bool, fault string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxProviderBody)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue // blank separators, comments, event: and id: lines
		}
		data = strings.TrimSpace(data)
		if done {
			return chunks, done, fmt.Sprintf("sent data after data: [DONE]: %s", clip(data))
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &obj); err != nil {
			return chunks, done, fmt.Sprintf("data: chunk %d is not a JSON object: %s", chunks+1, clip(data))
		}
		chunks++
	}
	if err := sc.Err(); err != nil {
		return chunks, done, fmt.Sprintf("reading the stream: %v", err)
	}
	return chunks, done, ""
}
