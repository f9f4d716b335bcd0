package terraform

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics are registered with controller-runtime's registry, so they are served on the
// manager's metrics endpoint beside its workqueue metrics (queue depth, latency).
var (
	metricRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "modkind_terraform_runs_total",
		Help: "Terraform runs by operation (plan, apply, destroy) and result (success, error, refused, awaiting_approval).",
	}, []string{"operation", "result"})
	metricRunSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "modkind_terraform_run_duration_seconds",
		Help:    "How long terraform runs take, init and plan included, by operation.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 12),
	}, []string{"operation"})
	metricRunsInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "modkind_terraform_runs_in_flight",
		Help: "Terraform runs holding a slot now.",
	})
	metricRunsWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "modkind_terraform_runs_waiting",
		Help: "Terraform runs waiting for a free slot (--max-concurrent-runs).",
	})
	metricStateBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "modkind_state_bytes",
		Help:    "Size of the Terraform states modkind stores, uncompressed.",
		Buckets: prometheus.ExponentialBuckets(1024, 4, 10),
	})
	metricRefusedPlans = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "modkind_refused_plans_total",
		Help: "Plans refused because they would destroy or replace objects.",
	})
	metricProviderStarts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "modkind_provider_processes_started_total",
		Help: "Provider processes started to be shared by terraform runs (--shared-providers).",
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(metricRuns, metricRunSeconds, metricRunsInFlight, metricRunsWaiting, metricStateBytes, metricRefusedPlans, metricProviderStarts)
}

// runResult names the outcome of a run for metricRuns.
func runResult(err error) string {
	switch err.(type) {
	case nil:
		return "success"
	case *RefusedPlanError:
		return "refused"
	case *AwaitingApprovalError:
		return "awaiting_approval"
	}
	return "error"
}
