package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A runner's terraform installs providers from the controller's mirror only. Init alone trusts the
// mirror's certificate and holds the token the mirror asks for; every other call, and so every
// provider process, keeps the pod's trust store and never sees the token.
func TestRunnerCLIConfig(t *testing.T) {
	const (
		mirror = "https://modkind-artifacts.modkind-system.svc:8443/v1/providers/"
		token  = "eyJ.runner-token.sig"
		ca     = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	)
	installation := "provider_installation {\n  network_mirror {\n    url = \"" + mirror + "\"\n  }\n}\n"
	credentials := "credentials \"modkind-artifacts.modkind-system.svc:8443\" {\n  token = \"" + token + "\"\n}\n"
	type files map[string]string
	type want struct {
		every, init files
		err         bool
	}
	cases := map[string]struct {
		reason string
		mirror string
		ca     string
		want   want
	}{
		"MirrorWithCA": {
			reason: "Every call installs from the mirror only; init adds the token and trusts the artifact server's certificate.",
			mirror: mirror, ca: ca,
			want: want{
				every: files{"TF_CLI_CONFIG_FILE": installation},
				init:  files{"TF_CLI_CONFIG_FILE": installation + credentials, "SSL_CERT_FILE": ca},
			},
		},
		"SystemRoots": {
			reason: "A mirror whose certificate chains to the system roots changes no trust store, even for init.",
			mirror: mirror,
			want: want{
				every: files{"TF_CLI_CONFIG_FILE": installation},
				init:  files{"TF_CLI_CONFIG_FILE": installation + credentials},
			},
		},
		"PlainHTTP": {
			reason: "The token never goes to a mirror without TLS.",
			mirror: "http://modkind-artifacts:8443/v1/providers/",
			want:   want{err: true},
		},
	}
	read := func(t *testing.T, env map[string]string) files {
		t.Helper()
		out := files{}
		for _, k := range []string{"TF_CLI_CONFIG_FILE", "SSL_CERT_FILE"} {
			if p, ok := env[k]; ok {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				out[k] = string(b)
			}
		}
		return out
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, initEnv, err := cliConfig(t.TempDir(), tc.mirror, []byte(tc.ca), token)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nerror: %v", tc.reason, err)
			}
			if tc.want.err {
				return
			}
			if diff := cmp.Diff(tc.want.every, read(t, env)); diff != "" {
				t.Errorf("%s\nwhat every call reads, -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.init, read(t, initEnv)); diff != "" {
				t.Errorf("%s\nwhat init reads instead, -want +got:\n%s", tc.reason, diff)
			}
			for k, v := range env {
				if strings.Contains(v, token) {
					t.Errorf("%s\nthe environment of every call holds the token in %s", tc.reason, k)
				}
			}
		})
	}
}
