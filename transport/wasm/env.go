package wasm

import (
	"fmt"
	"slices"
	"strings"
)

// credentialMarkers and credentialPrefixes mark a variable name as holding
// a secret, whose value is then redacted from logged stderr (the same
// rules as transport/stdio).
var credentialMarkers = [...]string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY",
	"PRIVATE_KEY", "ACCESS_KEY", "AUTH", "COOKIE",
}

var credentialPrefixes = [...]string{
	"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "GITHUB_", "GH_", "GITLAB_",
	"OPENAI_", "ANTHROPIC_", "HF_", "HUGGING",
}

func looksLikeCredential(name string) bool {
	up := strings.ToUpper(name)
	for _, m := range credentialMarkers {
		if strings.Contains(up, m) {
			return true
		}
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return strings.HasSuffix(up, "_KEY") || strings.HasSuffix(up, "_PAT")
}

// buildEnv returns the guest's environment, exactly the spec's variables
// in name order, and the secret-looking values among them for stderr
// redaction. Nothing comes from the host's environment.
func buildEnv(ext string, spec map[string]string) (names []string, secrets []string, err error) {
	for name, value := range spec {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, nil, fmt.Errorf("extension %q: %w: name %q must be non-empty and contain no '=' or NUL; fix the env entry in the extension's manifest or config", ext, ErrInvalidEnv, name)
		}
		if strings.ContainsRune(value, 0) {
			return nil, nil, fmt.Errorf("extension %q: %w: the value of %s contains a NUL byte; fix the env entry in the extension's manifest or config", ext, ErrInvalidEnv, name)
		}
		names = append(names, name)
		if looksLikeCredential(name) && len(value) >= 4 {
			secrets = append(secrets, value)
		}
	}
	slices.Sort(names)
	return names, secrets, nil
}
