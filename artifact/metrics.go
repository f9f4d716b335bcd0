package artifact

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The artifacts a runner fetches: its module bundle, and the provider packages its init installs
// from the controller's mirror.
const (
	artifactBundle   = "bundle"
	artifactProvider = "provider"
)

// metricServedBytes counts the bytes the server sent, by artifact: what a Run moves over the
// network before its terraform starts (the benchmark reports it per Run).
var metricServedBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "modkind_artifact_served_bytes_total",
	Help: "Bytes of artifacts served to runners, by artifact (bundle, provider).",
}, []string{"artifact"})

func init() {
	ctrlmetrics.Registry.MustRegister(metricServedBytes)
}
