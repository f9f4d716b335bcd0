package artifact

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The artifacts a runner fetches: its module bundle, the provider packages its init installs
// from the controller's mirror, and its Run's inputs.
const (
	artifactBundle   = "bundle"
	artifactProvider = "provider"
	artifactInputs   = "inputs"
)

// metricServedBytes counts the bytes the server sent, by artifact: what a Run moves over the
// network before its terraform starts (the benchmark reports it per Run).
var metricServedBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "modkind_artifact_served_bytes_total",
	Help: "Bytes of artifacts served to runners, by artifact (bundle, provider, inputs).",
}, []string{"artifact"})

func init() {
	ctrlmetrics.Registry.MustRegister(metricServedBytes)
}
