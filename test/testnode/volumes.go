package testnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serviceAccountDir is where Kubernetes mounts a pod's service account token; a container that
// mounts a token there reaches the API server with it.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// materialise writes the pod's volumes into its directory, links each container's mounts under
// the pod's root, and returns each container's environment.
func (p *Provider) materialise(ctx context.Context, r *podRun) (map[string]map[string]string, error) {
	pod := r.pod
	volumes := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		dir := filepath.Join(r.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if err := p.volume(ctx, pod, v, dir); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		volumes[v.Name] = dir
	}
	root := filepath.Join(r.dir, "root")
	envs := map[string]map[string]string{}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		token := ""
		for _, m := range c.VolumeMounts {
			dir, ok := volumes[m.Name]
			if !ok {
				return nil, fmt.Errorf("container %s mounts unknown volume %s", c.Name, m.Name)
			}
			if m.SubPath != "" || m.SubPathExpr != "" {
				return nil, fmt.Errorf("container %s: subPath is not supported", c.Name)
			}
			if err := link(root, m.MountPath, dir); err != nil {
				return nil, fmt.Errorf("container %s: %w", c.Name, err)
			}
			if filepath.Clean(m.MountPath) == serviceAccountDir {
				token = filepath.Join(dir, "token")
			}
		}
		kubeconfig := filepath.Join(r.dir, "kubeconfig-"+c.Name)
		if err := p.writeKubeconfig(kubeconfig, token); err != nil {
			return nil, err
		}
		env := map[string]string{"HOME": root}
		for k, v := range p.cfg.Env {
			env[k] = v
		}
		if _, ok := env["PATH"]; !ok {
			env["PATH"] = os.Getenv("PATH")
		}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		// The pod's identity, and nothing else: the token its service account was given.
		env["KUBECONFIG"] = kubeconfig
		envs[c.Name] = env
	}
	return envs, nil
}

// link makes mountPath under root lead to dir.
func link(root, mountPath, dir string) error {
	if !filepath.IsAbs(mountPath) {
		return fmt.Errorf("mountPath %s is not absolute", mountPath)
	}
	at := filepath.Join(root, filepath.Clean(mountPath))
	if err := os.MkdirAll(filepath.Dir(at), 0o700); err != nil {
		return err
	}
	if old, err := os.Readlink(at); err == nil {
		if old == dir {
			return nil
		}
		return fmt.Errorf("%s is mounted twice", mountPath)
	}
	return os.Symlink(dir, at)
}

func (p *Provider) volume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string) error {
	switch {
	case v.EmptyDir != nil:
		return nil
	case v.Secret != nil:
		data, err := p.secret(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Optional)
		if err != nil {
			return err
		}
		return writeItems(dir, data, v.Secret.Items)
	case v.ConfigMap != nil:
		data, err := p.configMap(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Optional)
		if err != nil {
			return err
		}
		return writeItems(dir, data, v.ConfigMap.Items)
	case v.DownwardAPI != nil:
		return writeDownward(dir, pod, v.DownwardAPI.Items)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if err := p.projection(ctx, pod, s, dir); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("only emptyDir, secret, configMap, downwardAPI and projected volumes are supported")
}

func (p *Provider) projection(ctx context.Context, pod *corev1.Pod, s corev1.VolumeProjection, dir string) error {
	switch {
	case s.ServiceAccountToken != nil:
		return p.token(ctx, pod, s.ServiceAccountToken, dir)
	case s.Secret != nil:
		data, err := p.secret(ctx, pod.Namespace, s.Secret.Name, s.Secret.Optional)
		if err != nil {
			return err
		}
		return writeItems(dir, data, s.Secret.Items)
	case s.ConfigMap != nil:
		data, err := p.configMap(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Optional)
		if err != nil {
			return err
		}
		return writeItems(dir, data, s.ConfigMap.Items)
	case s.DownwardAPI != nil:
		return writeDownward(dir, pod, s.DownwardAPI.Items)
	}
	return fmt.Errorf("unsupported projection")
}

// token asks the API server for a token of the pod's service account bound to the pod, as the
// kubelet does: it stops working when the pod is gone.
func (p *Provider) token(ctx context.Context, pod *corev1.Pod, s *corev1.ServiceAccountTokenProjection, dir string) error {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: s.ExpirationSeconds,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if s.Audience != "" {
		req.Spec.Audiences = []string{s.Audience}
	}
	tr, err := p.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of service account %s: %w", sa, err)
	}
	return writeFile(dir, s.Path, []byte(tr.Status.Token))
}

func (p *Provider) secret(ctx context.Context, ns, name string, optional *bool) (map[string][]byte, error) {
	s, err := p.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, err
	}
	return s.Data, nil
}

func (p *Provider) configMap(ctx context.Context, ns, name string, optional *bool) (map[string][]byte, error) {
	cm, err := p.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if optional != nil && *optional {
			return nil, nil
		}
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data, nil
}

func writeItems(dir string, data map[string][]byte, items []corev1.KeyToPath) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := writeFile(dir, k, v); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("key %s not found", it.Key)
		}
		if err := writeFile(dir, it.Path, v); err != nil {
			return err
		}
	}
	return nil
}

func writeDownward(dir string, pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile) error {
	for _, it := range items {
		if it.FieldRef == nil {
			return fmt.Errorf("downwardAPI %s: only fieldRef is supported", it.Path)
		}
		var v string
		switch it.FieldRef.FieldPath {
		case "metadata.name":
			v = pod.Name
		case "metadata.namespace":
			v = pod.Namespace
		case "metadata.uid":
			v = string(pod.UID)
		case "metadata.labels":
			v = pairs(pod.Labels)
		case "metadata.annotations":
			v = pairs(pod.Annotations)
		case "spec.serviceAccountName":
			v = pod.Spec.ServiceAccountName
		default:
			return fmt.Errorf("downwardAPI %s: field %s is not supported", it.Path, it.FieldRef.FieldPath)
		}
		if err := writeFile(dir, it.Path, []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

func pairs(m map[string]string) string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// writeFile writes a volume's file; paths come from the pod spec, which the API server validated
// as relative and free of "..".
func writeFile(dir, rel string, data []byte) error {
	clean := filepath.Clean(rel)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("path %s leaves the volume", rel)
	}
	at := filepath.Join(dir, clean)
	if err := os.MkdirAll(filepath.Dir(at), 0o700); err != nil {
		return err
	}
	return os.WriteFile(at, data, 0o600)
}

// writeKubeconfig gives a container the API server and, when it mounts a service account token,
// that token as its only credential. Without one it is anonymous.
func (p *Provider) writeKubeconfig(path, tokenFile string) error {
	cluster := &clientcmdapi.Cluster{Server: p.cfg.REST.Host, CertificateAuthorityData: p.cfg.REST.CAData,
		CertificateAuthority: p.cfg.REST.CAFile}
	user := &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"pod": user},
		Contexts:       map[string]*clientcmdapi.Context{"pod": {Cluster: "cluster", AuthInfo: "pod"}},
		CurrentContext: "pod",
	}
	return clientcmd.WriteToFile(cfg, path)
}
