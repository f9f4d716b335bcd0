// Command chart packages modkind's Helm chart as `helm package` does, with the version of the
// binary it installs: `make chart` runs it and writes bin/chart/modkind-<version>.tgz, which
// `helm install` and `helm push` (to an OCI registry) take as they are.
//
//	go run ./hack/chart --version 0.1.0 --out bin/chart
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Package writes the chart in dir as a .tgz into out, its version and appVersion both version
// (the chart and the image it names move together), and returns the file's path.
func Package(dir, version, out string) (string, error) {
	if _, err := semver.StrictNewVersion(version); err != nil {
		return "", fmt.Errorf("--version %q: a chart's version is SemVer 2 (e.g. 0.1.0): %w", version, err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		return "", fmt.Errorf("cannot load the chart in %s: %w", dir, err)
	}
	ch.Metadata.Version, ch.Metadata.AppVersion = version, version
	if err := ch.Validate(); err != nil {
		return "", fmt.Errorf("the chart in %s is not valid: %w", dir, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(ch, out)
}

func main() {
	dir := flag.String("chart", "charts/modkind", "the chart's directory")
	version := flag.String("version", "", "the chart's version and appVersion: the version of the image it installs")
	out := flag.String("out", "bin/chart", "directory to write the .tgz into")
	flag.Parse()
	path, err := Package(*dir, *version, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
