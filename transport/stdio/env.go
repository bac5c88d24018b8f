package stdio

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultEnvAllowlist returns the host variables a server inherits when
// [Options].BaseEnvAllowlist is nil. An entry is an exact name, or a prefix
// followed by "*" (as in "LC_*").
//
// The list is what ordinary command-line programs need to find executables,
// the user's directories, the locale, the terminal and the time zone:
//
//	PATH HOME USER LOGNAME SHELL
//	LANG LANGUAGE LC_*
//	TERM COLORTERM NO_COLOR
//	TMPDIR TZ
//	XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME
//	XDG_RUNTIME_DIR XDG_CONFIG_DIRS XDG_DATA_DIRS
//
// Proxy variables (HTTP_PROXY and friends) are deliberately absent: they
// often carry user:password. An extension that needs one declares it in its
// manifest or config, which puts it in [core.ServerSpec].Env.
func DefaultEnvAllowlist() []string {
	return []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL",
		"LANG", "LANGUAGE", "LC_*",
		"TERM", "COLORTERM", "NO_COLOR",
		"TMPDIR", "TZ",
		"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
		"XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	}
}

// credentialMarkers are substrings of variable names that mark a host
// variable as a credential. Such a variable is never inherited from the
// host, whatever the allowlist says.
var credentialMarkers = [...]string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY",
	"PRIVATE_KEY", "ACCESS_KEY", "AUTH", "COOKIE",
}

// credentialPrefixes are name prefixes of cloud and forge credentials.
var credentialPrefixes = [...]string{
	"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "GITHUB_", "GH_", "GITLAB_",
	"OPENAI_", "ANTHROPIC_", "HF_", "HUGGING",
}

// looksLikeCredential reports whether a variable name looks like it holds a
// secret.
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

// allowed reports whether name matches an allowlist entry.
func allowed(allowlist []string, name string) bool {
	for _, a := range allowlist {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// buildEnv returns the server's environment, sorted: the host variables
// that match allowlist and do not look like credentials, then spec's
// variables on top. It also returns the secret-looking values of spec's
// variables, for stderr redaction.
func buildEnv(ext string, host []string, allowlist []string, spec map[string]string) (env []string, secrets []string, err error) {
	vars := make(map[string]string)
	for _, kv := range host {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !allowed(allowlist, name) || looksLikeCredential(name) {
			continue
		}
		vars[name] = value
	}
	for name, value := range spec {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, nil, fmt.Errorf("extension %q: %w: name %q must be non-empty and contain no '=' or NUL; fix the env entry in the extension's manifest or config", ext, ErrInvalidEnv, name)
		}
		if strings.ContainsRune(value, 0) {
			return nil, nil, fmt.Errorf("extension %q: %w: the value of %s contains a NUL byte; fix the env entry in the extension's manifest or config", ext, ErrInvalidEnv, name)
		}
		vars[name] = value
		if looksLikeCredential(name) && len(value) >= 4 {
			secrets = append(secrets, value)
		}
	}
	env = make([]string, 0, len(vars))
	for name, value := range vars {
		env = append(env, name+"="+value)
	}
	slices.Sort(env)
	return env, secrets, nil
}

// lookupEnv returns the value of name in env, a list of "NAME=value".
func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
