package controller

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// assetsDir is where hack/testbin.sh builds kube-apiserver and etcd; KUBEBUILDER_ASSETS wins.
func assetsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	cache := os.Getenv("MODKIND_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "modkind")
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "testbin", "*", "kube-apiserver"))
	if len(matches) == 0 {
		return "", fmt.Errorf("no kube-apiserver found: run hack/testbin.sh (make testbin) or set KUBEBUILDER_ASSETS")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

// startLocalControlPlane starts etcd and kube-apiserver on loopback and writes a kubeconfig for
// them into dir, so that kubectl can watch what modkind does.
func startLocalControlPlane(dir string) (*rest.Config, func(), error) {
	assets, err := assetsDir()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot start local control plane: %w", err)
	}
	stop := func() { _ = env.Stop() }
	user, err := env.AddUser(envtest.User{Name: "modkind-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		stop()
		return nil, nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		stop()
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		stop()
		return nil, nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		stop()
		return nil, nil, err
	}
	fmt.Printf("Started a local control plane. Use it with:\n  export KUBECONFIG=%s\n", path)
	return cfg, stop, nil
}
