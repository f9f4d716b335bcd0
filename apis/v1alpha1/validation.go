package v1alpha1

import (
	"fmt"
	"regexp"
	"strings"
)

// reservedEnvNames and reservedEnvPrefixes are the environment variables a ProviderConfig may not
// set, compared upper-cased. They must match the CEL rules on EnvVar, which refuse the same names
// at admission; the controller checks again with ReservedEnvName.
var (
	reservedEnvNames = []string{
		// The shell and process basics: where programs, home and temp files are, what a shell runs.
		"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "SHELL", "USER", "PWD", "IFS", "ENV", "BASH_ENV",
		"CDPATH", "PS4", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE", "PROMPT_COMMAND",
		// Where network traffic goes and which certificates are trusted.
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "FTP_PROXY", "CURL_CA_BUNDLE",
		"REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
		// Interpreters and runtimes that load code named by the environment.
		"NODE_OPTIONS", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PERL5LIB", "PERL5OPT",
		"RUBYLIB", "RUBYOPT", "GODEBUG", "GOFLAGS", "GOCOVERDIR",
		// Configuration files that can run commands (kubeconfig exec plugins, AWS
		// credential_process, executable-sourced Google credentials) or reach the controller's
		// own cluster identity.
		"KUBECONFIG", "KUBE_CONFIG_PATH", "KUBE_CONFIG_PATHS", "KUBERNETES_SERVICE_HOST",
		"KUBERNETES_SERVICE_PORT", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
		// Terraform's older name for its CLI configuration file, read when TF_CLI_CONFIG_FILE is
		// unset: it says where providers are installed from.
		"TERRAFORM_CONFIG",
	}
	// Terraform and OpenTofu (TF_CLI_CONFIG_FILE, TF_PLUGIN_CACHE_DIR, TF_DATA_DIR, TF_VAR_...),
	// their update checks, git, the dynamic loader, TLS, ssh, provider plugin handshakes, gRPC,
	// modkind's own variables, and the XDG base directories (terraform finds providers in
	// $XDG_DATA_HOME/terraform/plugins, and many tools their configuration in $XDG_CONFIG_HOME).
	reservedEnvPrefixes = []string{"TF_", "TOFU_", "CHECKPOINT_", "GIT_", "LD_", "DYLD_", "SSL_", "SSH_", "PLUGIN_", "GRPC_", "MODKIND_", "XDG_"}
)

// ReservedEnvName reports whether a ProviderConfig may not set the environment variable name,
// because it steers terraform, git, the shell, the dynamic loader, TLS, proxies or modkind.
func ReservedEnvName(name string) bool {
	upper := strings.ToUpper(name)
	for _, n := range reservedEnvNames {
		if upper == n {
			return true
		}
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	return false
}

// ReservedEnvNames returns the reserved names and prefixes (ending in "_"), for documentation and
// tests.
func ReservedEnvNames() (names, prefixes []string) {
	return append([]string(nil), reservedEnvNames...), append([]string(nil), reservedEnvPrefixes...)
}

var (
	envNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	filePathPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$`)
	terraformFile   = regexp.MustCompile(`\.(tf|tf\.json|tofu|tofu\.json|tfvars|tfvars\.json|tfstate|tfstate\.backup|tfplan|hcl)$`)
)

// ValidateEnvName checks an environment variable name as admission does.
func ValidateEnvName(name string) error {
	switch {
	case len(name) > 128 || !envNamePattern.MatchString(name):
		return fmt.Errorf("environment variable name %q is not a valid name", name)
	case ReservedEnvName(name):
		return fmt.Errorf("environment variable %s steers the tools modkind runs and cannot be set by a ProviderConfig", name)
	}
	return nil
}

// ValidateFilePath checks a ProviderConfig file path as admission does: relative, inside the files
// directory, no hidden segments, and not named like a file Terraform reads.
func ValidateFilePath(p string) error {
	if len(p) > 256 || !filePathPattern.MatchString(p) {
		return fmt.Errorf("file path %q must be relative, made of letters, digits, '_', '-' and '.', with no segment starting with a dot", p)
	}
	for _, seg := range strings.Split(p, "/") {
		lower := strings.ToLower(seg)
		if terraformFile.MatchString(lower) || lower == "terraform.rc" {
			return fmt.Errorf("file path %q is named like a Terraform configuration, variables, state, plan or CLI configuration file", p)
		}
	}
	return nil
}

// ReservedRunnerKey reports whether a runner template (RunnerSpec) may not set the label or
// annotation key, because modkind (modkind.io/) or the Job controller (batch.kubernetes.io/,
// controller-uid, job-name) owns it. It matches the CEL rules on RunnerSpec, which refuse the same
// keys at admission; the Job builder skips them again.
func ReservedRunnerKey(key string) bool {
	prefix, _, hasPrefix := strings.Cut(key, "/")
	switch {
	case key == "controller-uid" || key == "job-name":
		return true
	case !hasPrefix:
		return false
	case prefix == "modkind.io" || strings.HasSuffix(prefix, ".modkind.io"), prefix == "batch.kubernetes.io":
		return true
	}
	return false
}
