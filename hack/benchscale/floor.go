package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modkind/modkind/test/thingstest"
)

// floor runs raw terraform: per instance a root module calling the module, with its state in a
// Secret of the API server (backend "kubernetes").
func (b *bench) floor(ctx context.Context, name string, m benchModule) (result, error) {
	var r result
	mod, err := b.moduleDir("raw", name, m)
	if err != nil {
		return r, err
	}
	ns := "raw-" + strings.ReplaceAll(name, "_", "-")
	if err := createNamespace(ctx, b.c, ns); err != nil {
		return r, err
	}
	root := func(i int, input string) (string, error) { return b.rawRoot(name, ns, mod, m, i, input) }
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.cliConfig, "TF_IN_AUTOMATION=1")
	each := func(input string, api *time.Duration, providers *int, requests *requestCounts, cmds ...[]string) (time.Duration, time.Duration, int, error) {
		before, apiBefore, providersBefore, mark := b.callCount(), apiServerCPU(), b.providerCount(), b.requests.mark()
		defer func() {
			*api, *providers = apiServerCPU()-apiBefore, b.providerCount()-providersBefore
			*requests = b.requests.countOrWarn(mark)
		}()
		start := time.Now()
		cpu, err := parallel(ctx, b.o.n, b.o.parallel, func(i int) (time.Duration, error) {
			dir, err := root(i, input)
			if err != nil {
				return 0, err
			}
			var cpu time.Duration
			for _, args := range cmds {
				c, err := runTerraform(ctx, b.terraform, dir, env, args...)
				cpu += c
				if err != nil {
					return cpu, err
				}
			}
			return cpu, nil
		})
		return time.Since(start), cpu, b.callCount() - before, err
	}
	r.createWall, r.createCPU, r.createCalls, err = each("v1", &r.createAPI, &r.createProviders, &r.createRequests, []string{"init", "-input=false"}, []string{"apply", "-auto-approve", "-input=false"})
	if err != nil {
		return r, err
	}
	if b.o.update {
		profiled := b.profiler.start(ctx, "floor "+name)
		defer profiled()
		r.updateWall, r.updateCPU, r.updateCalls, err = each("v2", &r.updateAPI, &r.updateProviders, &r.updateRequests, []string{"apply", "-auto-approve", "-input=false"})
	}
	return r, err
}

// rawRoot writes the root module of raw terraform's instance i of the module in mod, with input,
// its state in the namespace ns as the kubernetes backend keeps it, and returns its directory.
func (b *bench) rawRoot(name, ns, mod string, m benchModule, i int, input string) (string, error) {
	dir := filepath.Join(b.scratch, "raw", name, "work", strconv.Itoa(i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var args strings.Builder
	for k, v := range m.vars(b, i, input) {
		fmt.Fprintf(&args, "  %s = %q\n", k, v)
	}
	main := fmt.Sprintf(`terraform {
  backend "kubernetes" {
    secret_suffix = "i%d"
    namespace     = %q
    config_path   = %q
  }
}

module "m" {
  source = %q
%s}
`, i, ns, b.kubeconfig, mod, args.String())
	if m.fromProviderConfig {
		main += fmt.Sprintf(`
terraform {
  required_providers {
    things = { source = %q }
  }
}

provider "things" {
  directory = %q
}
`, thingstest.Source, b.cloud)
	}
	return dir, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644)
}

// runTerraform runs terraform and returns the CPU time it used, with its providers (children
// it waited for count in its own usage).
func runTerraform(ctx context.Context, bin, dir string, env []string, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return cpu, fmt.Errorf("terraform %s in %s: %w\n%s", args[0], dir, err, out.String())
	}
	return cpu, nil
}

// parallel runs fn for 0..n-1, at most p at once, and sums the CPU time they report.
func parallel(ctx context.Context, n, p int, fn func(int) (time.Duration, error)) (time.Duration, error) {
	var (
		mu    sync.Mutex
		total time.Duration
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cpu, err := fn(i)
				mu.Lock()
				total += cpu
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return total, first
}
