// Command argocd writes what Argo CD needs to manage modkind's objects from a GitOps repository,
// for the API groups of your generated kinds (the chart's generatedGroups), which are all you set:
//
//	go run ./hack/argocd --groups platform.example.org --repo https://git.example.com/platform/gitops.git --path modkind
//
// It prints two documents (`make argocd GENERATED_GROUPS=… REPO=…` writes them to bin/argocd.yaml):
//   - the entries to merge into Argo CD's argocd-cm: annotation tracking, so that Argo CD never
//     adopts or prunes the state Secrets modkind writes beside the instances, and the health
//     checks (examples/argocd/health.lua for every kind of your groups, module-health.lua for
//     Modules), keyed by your groups;
//   - an Application for the repository's directory of Modules and instances: the instances of a
//     kind that does not exist yet (modkind makes it from its Module) are not dry-run on the
//     first sync, and what people set in the cluster (an approval, a pause, a rollout's promote or
//     undo) is neither shown as a difference nor reverted by self-heal.
//
// examples/argocd/argocd-cm.yaml and application.yaml are its output for the group wildcard
// *.example.org (a test keeps them so).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// Options say what to write for.
type Options struct {
	// Groups are the API groups of the generated kinds; a leading "*." matches every group with
	// that suffix.
	Groups []string
	// Repo, Revision and Path name the GitOps repository's directory of Modules and instances.
	Repo, Revision, Path string
	// Name is the Application's.
	Name string
	// Scripts is the directory of health.lua and module-health.lua.
	Scripts string
}

// group is what --groups accepts: a DNS subdomain, or "*." and one.
var group = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)

var out = template.Must(template.New("argocd").Parse(`# Merge into Argo CD's argocd-cm ConfigMap so that Argo CD judges the health of the kinds modkind
# generates in {{.GroupList}} and of Modules. Written by hack/argocd (make argocd GENERATED_GROUPS=...) from
# examples/argocd/health.lua and module-health.lua. Track resources by annotation (not label), so
# that Argo CD never adopts or prunes the state Secrets modkind writes beside the instances.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  application.resourceTrackingMethod: annotation
  resource.customizations: |
{{- range .Groups}}
    "{{.}}/*":
      health.lua: |
{{$.Health}}
{{- end}}
    "modkind.io/Module":
      health.lua: |
{{.ModuleHealth}}
---
# An Application for the directory of a GitOps repository that holds Modules and their instances.
# Annotate each Module with argocd.argoproj.io/sync-wave: "-1": Argo CD then applies the Modules
# first and waits until they are Healthy (their kind is served) before it applies the instances.
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {{.Name}}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: {{.Repo}}
    targetRevision: {{.Revision}}
    path: {{.Path}}
  destination:
    server: https://kubernetes.default.svc
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
      # An instance's kind exists only once modkind has read its Module: skip the dry run of
      # instances whose kind is not served yet (the first sync) instead of failing it.
      - SkipDryRunOnMissingResource=true
      # What ignoreDifferences lists below is also left alone by a sync.
      - RespectIgnoreDifferences=true
    retry:
      limit: 10
      backoff:
        duration: 10s
        factor: 2
        maxDuration: 3m
  # What people set in the cluster, which self-heal would otherwise revert: an approval
  # (modkind approve), a pause (crossplane.io/paused), a rollout's promote, undo and pause
  # (modkind rollout). Remove the spec.rollout.paused line if you pause rollouts from git.
  ignoreDifferences:
{{- range .Groups}}
    - group: "{{.}}"
      kind: "*"
      jqPathExpressions:
        - .spec.approval.approvedPlan
        - .metadata.annotations["crossplane.io/paused"]
{{- end}}
    - group: modkind.io
      kind: Module
      jqPathExpressions:
        - .spec.rollout.paused
        - .metadata.annotations["modkind.io/promote"]
        - .metadata.annotations["modkind.io/undo"]
`))

// Write returns the two documents for o.
func Write(o Options) ([]byte, error) {
	if len(o.Groups) == 0 {
		return nil, fmt.Errorf("--groups: name the API groups of your generated kinds (the chart's generatedGroups)")
	}
	for _, g := range o.Groups {
		if !group.MatchString(g) {
			return nil, fmt.Errorf("--groups: %q is not an API group (a DNS subdomain such as platform.example.org, or *.example.org)", g)
		}
	}
	if o.Repo == "" || o.Path == "" {
		return nil, fmt.Errorf("--repo and --path: name the GitOps repository and its directory of Modules and instances")
	}
	health, err := script(o.Scripts, "health.lua")
	if err != nil {
		return nil, err
	}
	moduleHealth, err := script(o.Scripts, "module-health.lua")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = out.Execute(&b, map[string]any{
		"Groups": o.Groups, "GroupList": strings.Join(o.Groups, ", "), "Health": health, "ModuleHealth": moduleHealth,
		"Name": o.Name, "Repo": o.Repo, "Revision": o.Revision, "Path": o.Path,
	})
	return b.Bytes(), err
}

// script is the Lua file name of dir, indented to sit in argocd-cm's block.
func script(dir, name string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("cannot read the health check: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "        " + l
		}
	}
	return strings.Join(lines, "\n"), nil
}

func main() {
	var o Options
	groups := flag.String("groups", "", "comma-separated API groups of the generated kinds (the chart's generatedGroups); *.<suffix> matches every group with that suffix")
	flag.StringVar(&o.Repo, "repo", "", "the GitOps repository's URL")
	flag.StringVar(&o.Revision, "revision", "HEAD", "the branch, tag or commit Argo CD follows")
	flag.StringVar(&o.Path, "path", "", "the repository's directory of Modules and instances")
	flag.StringVar(&o.Name, "name", "modkind-instances", "the Application's name")
	flag.StringVar(&o.Scripts, "scripts", filepath.Join("examples", "argocd"), "directory of health.lua and module-health.lua")
	flag.Parse()
	for _, g := range strings.Split(*groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			o.Groups = append(o.Groups, g)
		}
	}
	b, err := Write(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd:", err)
		os.Exit(2)
	}
	os.Stdout.Write(b)
}
