package agent

import (
	"yolop.dev/agent/provider"
	"yolop.dev/core/host"
)

// Elided replaces the content of a tool result the context window had no
// more room for.
const Elided = "[output elided: the conversation outgrew the model's context window; call the tool again if it is still needed]"

// Request returns the next model request of the turn in progress: the
// turn's system prompt, the tools (every tool the session does not defer,
// in the session's order, then the deferred tools tool_search found, in
// the order found) and the conversation.
//
// Before it returns, the conversation is fitted to the context window:
// what the request sends (system prompt, tool definitions and messages)
// must leave room for a reply of [Options.MaxTokens]
// ([provider.DefaultMaxTokens] when zero). A token covers at least one
// byte, so a request whose bytes fit is sent as it is; one that might not
// is counted with [Options.Count], each message once. While it does not
// fit:
//
//  1. the oldest tool result not yet elided is replaced by [Elided],
//     except the results the model has not seen yet (those after its
//     last reply);
//  2. when no such result is left, the oldest earlier turn is dropped
//     whole (its user message, replies and results), never the turn in
//     progress.
//
// What is elided or dropped stays so, so the requests that follow share
// their prefix again. If the turn in progress alone does not fit, the
// request goes as it is and the provider's context-too-long error (see
// [provider.ErrContextTooLong]) makes the loop retry once with half the
// room, then ends the turn.
func (a *Agent) Request() provider.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	tools, toolBytes := a.toolsLocked()
	// A token covers at least one byte, so bytes bound tokens from above:
	// only a request that might not fit is counted.
	if len(a.system)+toolBytes+a.bytesLocked() > a.room() {
		a.fitLocked(a.room() - a.systemTokensLocked() - a.toolTokensLocked(tools))
	}
	msgs := make([]provider.Message, len(a.history))
	for i, e := range a.history {
		msgs[i] = e.msg
	}
	return provider.Request{Model: a.o.Model, System: a.system, Messages: msgs, Tools: tools, MaxTokens: a.o.MaxTokens}
}

// room is the context window less the reply's reserve.
func (a *Agent) room() int {
	reserve := a.o.MaxTokens
	if reserve <= 0 {
		reserve = provider.DefaultMaxTokens
	}
	return a.o.ContextWindow - reserve
}

// compact makes room after a context-too-long answer: every tool result
// the model has seen is elided, and the conversation is fitted into half
// the room.
func (a *Agent) compact() {
	a.mu.Lock()
	defer a.mu.Unlock()
	tools, _ := a.toolsLocked()
	room := (a.room() - a.systemTokensLocked() - a.toolTokensLocked(tools)) / 2
	a.elideLocked(a.unseenLocked(), -1)
	a.fitLocked(room)
}

// toolsLocked returns the tools a request offers and their size in
// bytes.
func (a *Agent) toolsLocked() ([]provider.Tool, int) {
	infos := a.o.Session.Tools()
	out := make([]provider.Tool, 0, 64)
	size := 0
	add := func(t provider.Tool) {
		size += len(t.Name) + len(t.Description) + len(t.InputSchema) + messageOverhead
		out = append(out, t)
	}
	var want map[string]int // found tool → its place among them
	if len(a.found) > 0 {
		want = make(map[string]int, len(a.found))
		for i, name := range a.found {
			want[name] = i
		}
	}
	found := make([]*host.ToolInfo, len(a.found))
	for i := range infos {
		ti := &infos[i]
		if ti.Deferred {
			if j, ok := want[ti.Name]; ok {
				found[j] = ti
			}
			continue
		}
		add(provider.Tool{Name: ti.Name, Description: ti.Def.Description, InputSchema: ti.Def.InputSchema})
	}
	for _, ti := range found {
		if ti != nil {
			add(provider.Tool{Name: ti.Name, Description: ti.Def.Description, InputSchema: ti.Def.InputSchema})
		}
	}
	return out, size
}

// toolTokensLocked counts the tokens of tool definitions, each once while
// its size stays the same.
func (a *Agent) toolTokensLocked(tools []provider.Tool) int {
	n := 0
	for _, t := range tools {
		c, ok := a.tools[t.Name]
		if !ok || c.description != len(t.Description) || c.schema != len(t.InputSchema) {
			c = toolCost{len(t.Description), len(t.InputSchema), a.o.Count(t.Name) + a.o.Count(t.Description) + a.o.Count(string(t.InputSchema)) + messageOverhead}
			a.tools[t.Name] = c
		}
		n += c.tokens
	}
	return n
}

// A toolCost is a tool definition's token count, kept while the
// definition's size stays the same.
type toolCost struct{ description, schema, tokens int }

// systemTokensLocked counts the turn's system prompt, once.
func (a *Agent) systemTokensLocked() int {
	if a.systemTokens < 0 {
		a.systemTokens = a.o.Count(a.system)
	}
	return a.systemTokens
}

// fitLocked elides and drops by the rule of [Agent.Request] until the
// messages cost at most room.
func (a *Agent) fitLocked(room int) {
	total := a.tokensLocked()
	if total <= room {
		return
	}
	total = a.elideLocked(a.unseenLocked(), room)
	current := a.history[len(a.history)-1].turn
	for total > room && len(a.history) > 0 && a.history[0].turn < current {
		oldest := a.history[0].turn
		n := 0
		for n < len(a.history) && a.history[n].turn == oldest {
			total -= a.history[n].tokens
			n++
		}
		a.history = a.history[n:]
	}
}

// unseenLocked returns the index of the first tool result the model has
// not seen: the results after its last reply.
func (a *Agent) unseenLocked() int {
	i := len(a.history)
	for i > 0 && a.history[i-1].msg.Role == provider.RoleTool {
		i--
	}
	return i
}

// elideLocked elides the tool results before end, oldest first, until
// the messages cost at most room, and returns what they cost after.
func (a *Agent) elideLocked(end, room int) int {
	total := a.tokensLocked()
	for i := 0; i < end && total > room; i++ {
		e := &a.history[i]
		if e.msg.ToolResult == nil || e.msg.ToolResult.Content == Elided {
			continue
		}
		r := *e.msg.ToolResult
		r.Content = Elided
		e.msg.ToolResult = &r
		was := e.tokens
		e.tokens, e.bytes = a.messageTokens(e.msg), messageBytes(e.msg)
		total -= was - e.tokens
	}
	return total
}

// tokensLocked counts the messages not counted yet and returns the
// tokens of them all.
func (a *Agent) tokensLocked() int {
	total := 0
	for i := range a.history {
		e := &a.history[i]
		if e.tokens < 0 {
			e.tokens = a.messageTokens(e.msg)
		}
		total += e.tokens
	}
	return total
}

func (a *Agent) bytesLocked() int {
	total := 0
	for _, e := range a.history {
		total += e.bytes
	}
	return total
}
