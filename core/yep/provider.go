package yep

// ProviderParams is the payload of capability_params["provider"] in the
// initialize result: the OpenAI-compatible endpoint a capability server
// hosts on loopback and offers to the agent as a model provider.
//
// The host clamps it by the approved manifest: BaseURL must be http(s) on a
// loopback IP literal (127.0.0.0/8 or ::1, never a host name) with a path,
// and Models must be ids the manifest approved; the context window of each
// comes from the manifest, not from the handshake.
type ProviderParams struct {
	// BaseURL is the endpoint's base, e.g. "http://127.0.0.1:43121/v1";
	// the host appends "/models" and "/chat/completions".
	BaseURL string `json:"baseUrl"`
	// Models are the model ids served, a subset of the manifest's.
	Models []string `json:"models"`
}
