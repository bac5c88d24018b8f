package packaging

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxContextWindow bounds a provider model's approved context window, in
// tokens.
const MaxContextWindow = 100_000_000

// MaxProviderModels bounds the models of one providers facet.
const MaxProviderModels = 256

// modelIDRE is the charset of a provider model id: the ids of local model
// servers ("llama3.1:8b", "qwen/qwen3", "gpt-4o-mini") fit; whitespace and
// control characters do not.
var modelIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

// checkProvider applies the rules of the providers facet: a valid name, a
// non-empty list of unique, well-formed model ids, each with a context
// window in 1..MaxContextWindow. A provider needs a capability server,
// which the caller checks with the other facets that need one.
func (c *checker) checkProvider(p *Provider) {
	if !identRE.MatchString(p.Name) {
		c.errf(nil, "yolop.provider.name", "%q is not a valid provider name (want a letter or '_' then letters, digits, '_', at most 64)", p.Name)
	}
	if len(p.Models) == 0 {
		c.errf(nil, "yolop.provider.models", "empty; list the models the provider may offer, each with its id and context_window")
	}
	if len(p.Models) > MaxProviderModels {
		c.errf(nil, "yolop.provider.models", "%d models, more than the %d a provider may offer", len(p.Models), MaxProviderModels)
	}
	seen := map[string]int{}
	for i, m := range p.Models {
		base := fmt.Sprintf("yolop.provider.models[%d]", i)
		if !modelIDRE.MatchString(m.ID) {
			c.errf(nil, base+".id", "%q is not a valid model id (want a letter or digit, then letters, digits and . _ : / -, at most 128, no whitespace)", m.ID)
		}
		if j, dup := seen[m.ID]; dup {
			c.errf(ErrDuplicateName, base+".id", "model %q is already declared at yolop.provider.models[%d]", m.ID, j)
		} else {
			seen[m.ID] = i
		}
		if m.ContextWindow < 1 || m.ContextWindow > MaxContextWindow {
			c.errf(nil, base+".context_window", "%d is outside 1..%d tokens; give the model's context window", m.ContextWindow, MaxContextWindow)
		}
	}
}

// providerSummary is the providers facet in one line, for the consent
// summary: "Provider scripted: models a (128000-token window), b (…)".
func providerSummary(p *Provider) string {
	models := make([]string, len(p.Models))
	for i, m := range p.Models {
		models[i] = modelText(m)
	}
	return fmt.Sprintf("Provider %s: models %s", p.Name, strings.Join(models, ", "))
}

func modelText(m ProviderModel) string {
	return fmt.Sprintf("%s (%d-token window)", m.ID, m.ContextWindow)
}

// provider compares the providers facets: a new provider, a new model or a
// larger context window widens (the agent may send more to the endpoint
// and trusts the window); a removed provider or model, or a smaller
// window, narrows; a renamed provider is noted.
func (d *differ) provider(old, next *Provider) {
	switch {
	case old == nil && next == nil:
		return
	case old == nil:
		d.wide("new provider %s", strings.TrimPrefix(providerSummary(next), "Provider "))
		return
	case next == nil:
		d.narrow("provider %s removed", old.Name)
		return
	}
	if old.Name != next.Name {
		d.note("provider name %s → %s", old.Name, next.Name)
	}
	was := map[string]int{}
	for _, m := range old.Models {
		was[m.ID] = m.ContextWindow
	}
	now := map[string]bool{}
	for _, m := range next.Models {
		now[m.ID] = true
		w, ok := was[m.ID]
		switch {
		case !ok:
			d.wide("provider %s: new model %s", next.Name, modelText(m))
		case m.ContextWindow > w:
			d.wide("provider %s: model %s context window %d → %d tokens", next.Name, m.ID, w, m.ContextWindow)
		case m.ContextWindow < w:
			d.narrow("provider %s: model %s context window %d → %d tokens", next.Name, m.ID, w, m.ContextWindow)
		}
	}
	for _, m := range old.Models {
		if !now[m.ID] {
			d.narrow("provider %s: model %s removed", next.Name, m.ID)
		}
	}
}
