// Package testnode is a Kubernetes node for tests whose pods run as local processes: virtual-kubelet
// with a provider that starts each container's command, so Jobs, pods, tokens and RBAC are real.
//
// Only the container runtime is replaced. A pod's volumes are materialised in a directory of its
// own (service account tokens are requested from the API server for the pod, as the kubelet does),
// and its process reaches the API server with that token alone, through a kubeconfig named by
// KUBECONFIG. Images are not pulled: Config.Images maps an image to the executable that stands for
// its entrypoint. The node binds pending pods that fit it, since a test cluster runs no scheduler.
package testnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config says which cluster the node joins and how it runs pods.
type Config struct {
	// Name of the Node object.
	Name string
	// Labels of the Node, in addition to kubernetes.io/hostname.
	Labels map[string]string
	// REST is how the node reaches the API server (a kubelet's own identity).
	REST *rest.Config
	// Root is the directory under which each pod gets a directory of its own.
	Root string
	// Images maps an image reference to the local executable that its entrypoint stands for. A
	// container whose command is empty runs that executable; one whose command names a relative
	// program looks it up here by the image, then on PATH.
	Images map[string]string
	// Env is added to every process after the pod's own environment (e.g. a PATH for tools).
	Env map[string]string
}

// Node is a running test node.
type Node struct {
	vk   *nodeutil.Node
	pods *Provider
	done chan error
}

// Start registers the node and runs it until ctx ends. It returns once the node is Ready.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Name == "" || cfg.REST == nil || cfg.Root == "" {
		return nil, fmt.Errorf("testnode: Name, REST and Root are required")
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, err
	}
	cfg.Root = root
	if cfg.REST.QPS == 0 && cfg.REST.Burst == 0 {
		// A kubelet's own limits (kubeAPIQPS, kubeAPIBurst), not client-go's 5 a second: with
		// those, a node starting ten pods at once started one a second.
		cfg.REST = rest.CopyConfig(cfg.REST)
		cfg.REST.QPS, cfg.REST.Burst = 50, 100
	}
	cs, err := kubernetes.NewForConfig(cfg.REST)
	if err != nil {
		return nil, err
	}
	var pods *Provider
	newProvider := func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		pods = newProvider(cfg, cs, pc)
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("256Gi"),
			corev1.ResourcePods:   resource.MustParse("1000"),
		}
		pc.Node.Status.Capacity = capacity
		pc.Node.Status.Allocatable = capacity
		for k, v := range cfg.Labels {
			pc.Node.Labels[k] = v
		}
		return pods, nil, nil
	}
	vk, err := nodeutil.NewNode(cfg.Name, newProvider, nodeutil.WithClient(cs), func(c *nodeutil.NodeConfig) error {
		// No kubelet API: logs are files in the pod's directory.
		c.HTTPListenAddr = "127.0.0.1:0"
		c.NumWorkers = 4
		c.InformerResyncPeriod = 30 * time.Second
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := &Node{vk: vk, pods: pods, done: make(chan error, 1)}
	go func() { n.done <- vk.Run(ctx) }()
	go bindPending(ctx, cs, vk, cfg.Name)
	if err := vk.WaitReady(ctx, time.Minute); err != nil {
		return nil, fmt.Errorf("testnode: node %s not ready: %w", cfg.Name, err)
	}
	return n, nil
}

// PodDir is the directory of a pod's volumes, logs and root, for tests to look into.
func (n *Node) PodDir(namespace, name string) string { return n.pods.podDir(namespace, name) }

// Wait waits until the node stopped (its context ended) and every process it started exited.
func (n *Node) Wait() error {
	err := <-n.done
	n.pods.stopAll()
	return err
}
