// Command modkind turns Terraform modules into Kubernetes kinds and applies their instances with
// Terraform. Without a cluster it starts a local control plane and runs the quickstart.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/reconcile"
)

func main() {
	if len(os.Args) > 1 {
		if cmd, ok := commands[os.Args[1]]; ok {
			if err := cmd(os.Args[2:], os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "modkind:", err)
				os.Exit(1)
			}
			return
		}
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "modkind:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := reconcile.DefaultConfig()
	var (
		quickstart  = flag.String("quickstart", "", "apply the manifests in this directory once the controller runs, wait until they are Ready and print their outputs")
		metricsAddr = flag.String("metrics-bind-address", "0", "address of the metrics endpoint; 0 turns it off")
		probeAddr   = flag.String("health-probe-bind-address", "0", "address of the health probes; 0 turns them off")
		leaderElect = flag.Bool("leader-elect", false, "elect a leader so that several replicas can run")
		leaderNS    = flag.String("leader-election-namespace", "", "namespace of the leader election Lease; the controller's own when empty")
		namespaces  = flag.String("namespaces", "", "comma-separated tenant namespaces whose instances, ProviderConfigs and Secrets modkind watches and writes; all namespaces when empty")
		credsNS     = flag.String("credentials-namespaces", ownNamespace(), "comma-separated namespaces that Module source credentials and ClusterProviderConfig Secrets may be read from")
	)
	flag.StringVar(&cfg.Terraform, "terraform-binary", os.Getenv("MODKIND_TERRAFORM"), "terraform or tofu executable (env MODKIND_TERRAFORM); terraform, then tofu, on PATH when empty")
	flag.StringVar(&cfg.Dir, "work-dir", defaultWorkDir(), "directory for fetched modules and terraform work directories")
	flag.IntVar(&cfg.MaxConcurrentRuns, "max-concurrent-runs", cfg.MaxConcurrentRuns, "terraform processes running at once, across all instances")
	flag.IntVar(&cfg.MaxReconciles, "max-reconciles", cfg.MaxReconciles, "instances of one kind reconciled at once")
	flag.DurationVar(&cfg.PollInterval, "poll-interval", cfg.PollInterval, "how often an instance is observed; observing an unchanged instance runs no terraform")
	flag.DurationVar(&cfg.DriftInterval, "drift-interval", cfg.DriftInterval, "how often a refreshing plan looks for changes made outside modkind; 0 never")
	flag.DurationVar(&cfg.CollectInterval, "collect-interval", cfg.CollectInterval, "how often work directories of deleted instances and unused module snapshots are removed; 0 never")
	flag.DurationVar(&cfg.MinDriftInterval, "min-drift-interval", cfg.MinDriftInterval, "the shortest drift interval an instance annotation or a Module may ask for")
	flag.DurationVar(&cfg.ModuleRecheck, "module-recheck-interval", cfg.ModuleRecheck, "how often a Module's source is read again to notice changes")
	flag.DurationVar(&cfg.RunTimeout, "run-timeout", cfg.RunTimeout, "how long one reconcile of an instance, terraform included, may take")
	flag.DurationVar(&cfg.LockDuration, "lock-duration", cfg.LockDuration, "how long a state lock outlives the last renewal of a controller that died")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	cfg.Namespaces = splitList(*namespaces)
	cfg.CredentialsNamespaces = splitList(*credsNS)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	if _, err := reconcile.TerraformBinary(cfg.Terraform); err != nil {
		return err
	}
	// controller-runtime defines --kubeconfig; without it, KUBECONFIG, or in-cluster config, modkind
	// starts a local control plane.
	restCfg, stop, err := restConfig(flag.Lookup("kubeconfig").Value.String(), cfg.Dir)
	if err != nil {
		return err
	}
	defer stop()
	// Each instance costs a few requests per poll; client-go's default of 5 QPS throttles that.
	restCfg.QPS, restCfg.Burst = 50, 100

	scheme, err := reconcile.Scheme()
	if err != nil {
		return err
	}
	mo := reconcile.ManagerOptions(scheme, cfg)
	mo.Metrics = metricsserver.Options{BindAddress: *metricsAddr}
	mo.HealthProbeBindAddress = *probeAddr
	mo.LeaderElection = *leaderElect
	mo.LeaderElectionID = "modkind.io"
	mo.LeaderElectionNamespace = *leaderNS
	mgr, err := ctrl.NewManager(restCfg, mo)
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
	if *quickstart != "" {
		go func() {
			if err := runQuickstart(ctx, direct, *quickstart, os.Stdout); err != nil {
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

// ownNamespace is the namespace modkind runs in: POD_NAMESPACE (the chart sets it from the
// downward API), else the service account's namespace in a pod, else modkind-system.
func ownNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "modkind-system"
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func defaultWorkDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "modkind", "run")
	}
	return filepath.Join(os.TempDir(), "modkind")
}

// restConfig finds the cluster to run against, starting a local control plane when there is none.
func restConfig(kubeconfig, dir string) (*rest.Config, func(), error) {
	if kubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		return c, func() {}, err
	}
	if os.Getenv("KUBECONFIG") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		c, err := ctrl.GetConfig()
		return c, func() {}, err
	}
	return startLocalControlPlane(dir)
}
