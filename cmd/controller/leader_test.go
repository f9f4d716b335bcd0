package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/executor/job"
)

// Where the other replicas reach this one's artifact server: what the operator says, else the
// Pod's IP the chart passes with the port the server binds, else the bound address when it names
// a host; never a wildcard, which would name every replica alike.
func TestAdvertiseAddress(t *testing.T) {
	type want struct {
		Address string
		Err     bool
	}
	cases := map[string]struct {
		reason string
		given  string
		bind   string
		podIP  string
		want   want
	}{
		"Given":         {reason: "An address given is used as it is.", given: "modkind-0.modkind:8443", bind: ":8443", podIP: "10.0.0.5", want: want{Address: "modkind-0.modkind:8443"}},
		"GivenNoPort":   {reason: "An address without a port is refused.", given: "10.0.0.5", bind: ":8443", want: want{Err: true}},
		"PodIP":         {reason: "In a Pod: its IP, with the bound port.", bind: ":8443", podIP: "10.0.0.5", want: want{Address: "10.0.0.5:8443"}},
		"PodIPv6":       {reason: "An IPv6 Pod IP is bracketed.", bind: ":8443", podIP: "fd00::5", want: want{Address: "[fd00::5]:8443"}},
		"BoundHost":     {reason: "Outside a Pod, a bound address that names a host (tests on loopback).", bind: "127.0.0.2:9443", want: want{Address: "127.0.0.2:9443"}},
		"Wildcard":      {reason: "A wildcard bind names no replica in particular: nothing is advertised.", bind: ":8443", want: want{}},
		"UnspecifiedIP": {reason: "0.0.0.0 is a wildcard too.", bind: "0.0.0.0:8443", want: want{}},
		"BadBind":       {reason: "A bind address without a port is refused.", bind: "8443", want: want{Err: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(envPodIP, tc.podIP)
			var got want
			var err error
			got.Address, err = advertiseAddress(tc.given, tc.bind)
			got.Err = err != nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// In job mode the certificates' Secret is the controller's own namespace's modkind-artifacts-tls
// unless named, and the advertised address follows the Pod's IP.
func TestFlagsJobReplicas(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "ops")
	t.Setenv(envPodIP, "10.1.2.3")
	base := []string{"--runner", "job", "--runner-image", "modkind:dev", "--artifacts-url", "https://modkind-artifacts.ops.svc:8443"}
	type want struct {
		Secret    types.NamespacedName
		Advertise string
	}
	cases := map[string]struct {
		reason string
		args   []string
		want   want
	}{
		"Defaults": {
			reason: "The default Secret is in the controller's namespace; the address is the Pod's IP and the bound port.",
			args:   base,
			want:   want{Secret: types.NamespacedName{Namespace: "ops", Name: job.DefaultArtifactsSecret}, Advertise: "10.1.2.3:8443"},
		},
		"Named": {
			reason: "The chart names the release's Secret and may bind another port.",
			args:   append(append([]string{}, base...), "--artifacts-tls-secret", "ops/rel-artifacts-tls", "--artifacts-bind-address", ":9443"),
			want:   want{Secret: types.NamespacedName{Namespace: "ops", Name: "rel-artifacts-tls"}, Advertise: "10.1.2.3:9443"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parse(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			got := want{Secret: o.Config.ArtifactsSecret, Advertise: o.advertise}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
