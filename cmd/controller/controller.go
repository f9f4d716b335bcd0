// Package controller is the entry of the controller, modkind's mode without a command: its
// options and flags, the cluster it runs against (cmd/cluster; a local control plane only with
// --local), the controller-runtime manager with leader election and health probes, modkind's own
// CRDs, and the quickstart that `make run` applies. What the manager runs, both controllers and
// their executors, is built by the composition root, package reconcile.
package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/terraform"
)

// Run runs the controller until it is interrupted.
func Run(o *Options) error {
	cfg := o.Config
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	// The cluster is looked for first: a command line that names none fails before anything
	// starts.
	restCfg, err := namedCluster(o)
	if err != nil {
		return err
	}
	if _, err := terraform.Binary(cfg.Terraform); err != nil {
		return err
	}
	if o.Local {
		local, stop, err := startLocalControlPlane(cfg.Dir)
		if err != nil {
			return err
		}
		defer stop()
		restCfg = local
	}
	restCfg.QPS, restCfg.Burst = apiLimits(o.APIQPS, o.APIBurst, cfg.MaxConcurrentRuns)

	scheme, err := apis.Scheme()
	if err != nil {
		return err
	}
	mgr, err := newManager(o, &cfg, restCfg, scheme)
	if err != nil {
		return err
	}
	// modkind installs its own CRDs so that a fresh cluster needs nothing else.
	direct, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	own, err := crds.CRDs()
	if err != nil {
		return err
	}
	if err := crd.Install(ctx, direct, own...); err != nil {
		return err
	}
	if _, err := reconcile.Setup(mgr, cfg); err != nil {
		return err
	}

	// The manager returns only after its graceful shutdown, in which interrupted terraform runs
	// stop and their state is stored: modkind must not exit before that.
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	quickstartFailed := make(chan error, 1)
	if o.Quickstart != "" {
		go func() {
			if err := RunQuickstart(ctx, direct, o.Quickstart, os.Stdout); err != nil {
				quickstartFailed <- err
				return
			}
			fmt.Println("modkind keeps running; press Ctrl-C to stop.")
		}()
	}
	select {
	case err := <-quickstartFailed:
		cancel()
		<-stopped
		return err
	case err := <-stopped:
		return err
	}
}

// namedCluster is the cluster the flags, the environment or the pod name (cluster.Flags.Resolve),
// nil with --local. With none named it says where it looked and that --local starts one.
func namedCluster(o *Options) (*rest.Config, error) {
	if o.Local {
		return nil, nil
	}
	found, err := o.Cluster.Resolve()
	if errors.Is(err, cluster.ErrNoCluster) {
		return nil, fmt.Errorf("%w; to try modkind without a cluster, pass --%s: it starts a local control plane (etcd and kube-apiserver on loopback)", err, FlagLocal)
	}
	if err != nil {
		return nil, err
	}
	ctrl.Log.WithName("setup").Info("running against the cluster of " + found.From)
	return found.Config, nil
}

// newManager makes the controller-runtime manager of the options, with leader election (whose
// Lease, in job mode, tells the followers where the leader's artifact server is: set in cfg) and
// the health probes.
func newManager(o *Options, cfg *reconcile.Config, restCfg *rest.Config, scheme *runtime.Scheme) (manager.Manager, error) {
	mo := reconcile.ManagerOptions(scheme, *cfg)
	mo.Metrics = metricsserver.Options{BindAddress: o.MetricsAddr}
	mo.HealthProbeBindAddress = o.ProbeAddr
	mo.PprofBindAddress = o.PprofAddr
	mo.LeaderElection = o.LeaderElect
	mo.LeaderElectionID = LeaderElectionID
	mo.LeaderElectionNamespace = o.LeaderElectionNamespace
	setRecorder := func(record.EventRecorder) {}
	if o.LeaderElect {
		ns := o.LeaderElectionNamespace
		if ns == "" {
			ns = OwnNamespace()
		}
		lease, set, err := LeaderLease(restCfg, ns, o.advertise)
		if err != nil {
			return nil, err
		}
		mo.LeaderElectionResourceLockInterface, setRecorder = lease, set
		// A follower relays runners to the leader's artifact server.
		cfg.ArtifactsLeader = lease
	}
	mgr, err := ctrl.NewManager(restCfg, mo)
	if err != nil {
		return nil, err
	}
	setRecorder(mgr.GetEventRecorderFor("modkind/leader-election"))
	if err := addProbes(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

// apiLimits is the client's rate limit. A run makes about ten requests (its Lease, state, plan
// and Run, status) in about a second of terraform when terraform is quick, so a fixed limit made
// the client, not terraform, the bound on how fast instances became Ready: 20 requests a second
// per run slot keep up; client-go's default of 5 throttles even polls.
func apiLimits(qps float64, burst, runs int) (float32, int) {
	if qps <= 0 {
		qps = max(50, 20*float64(runs))
	}
	if burst <= 0 {
		burst = int(2 * qps)
	}
	return float32(qps), burst
}
