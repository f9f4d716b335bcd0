// Command xfunction is a small Crossplane composition function that modkind's tests build and run
// as a local process. It composes one object of the kind its input names, copying the composite's
// spec.parameters into the object's spec.forProvider and naming the object's connection Secret
// "<composite>-<name>". The object is ready when its Ready condition is True; its
// status.atProvider is copied to the composite's status.atProvider.
//
// Crossplane v2 composites have no connection Secret of their own. With
// aggregateConnectionSecret, the function also composes a Secret "<composite>-connection" holding
// the connection details Crossplane observed for the object, ready once it holds any.
//
// Input:
//
//	apiVersion: xfunction.modkind.io/v1alpha1
//	kind: Input
//	name: greeting                                   # composition resource name
//	compose: {apiVersion: platform.example.org/v1alpha1, kind: Greeting}
//	aggregateConnectionSecret: true
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

func main() {
	network := flag.String("network", "tcp", "tcp or unix")
	address := flag.String("address", "127.0.0.1:9443", "address (or socket path) to serve gRPC on")
	certs := flag.String("tls-certs-dir", "", "directory with tls.crt, tls.key and ca.crt (the CA of the clients)")
	insecure := flag.Bool("insecure", false, "serve without mTLS")
	flag.Parse()
	err := function.Serve(&fn{},
		function.Listen(*network, *address),
		function.MTLSCertificates(*certs),
		function.Insecure(*insecure),
		function.WithMetricsServer(""))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

type fn struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

// input is the function's input.
type input struct {
	Name    string
	Compose struct{ APIVersion, Kind string }
	// AggregateConnectionSecret composes a Secret with the object's connection details.
	AggregateConnectionSecret bool
}

func readInput(req *fnv1.RunFunctionRequest) (input, error) {
	u := &unstructured.Unstructured{}
	if err := request.GetInput(req, u); err != nil {
		return input{}, err
	}
	var in input
	in.Name, _, _ = unstructured.NestedString(u.Object, "name")
	in.Compose.APIVersion, _, _ = unstructured.NestedString(u.Object, "compose", "apiVersion")
	in.Compose.Kind, _, _ = unstructured.NestedString(u.Object, "compose", "kind")
	in.AggregateConnectionSecret, _, _ = unstructured.NestedBool(u.Object, "aggregateConnectionSecret")
	if in.Name == "" || in.Compose.APIVersion == "" || in.Compose.Kind == "" {
		return input{}, fmt.Errorf("input needs name, compose.apiVersion and compose.kind")
	}
	return in, nil
}

// RunFunction composes the object (and the connection Secret) for one composite.
func (f *fn) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	if err := f.run(req, rsp); err != nil {
		response.Fatal(rsp, err)
	}
	return rsp, nil
}

func (f *fn) run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	in, err := readInput(req)
	if err != nil {
		return err
	}
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return err
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		return err
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return err
	}
	xrName := oxr.Resource.GetName()

	obj := composed.New()
	obj.SetAPIVersion(in.Compose.APIVersion)
	obj.SetKind(in.Compose.Kind)
	params, err := oxr.Resource.GetValue("spec.parameters")
	if err != nil {
		params = map[string]any{}
	}
	if err := obj.SetValue("spec.forProvider", params); err != nil {
		return err
	}
	if err := obj.SetString("spec.writeConnectionSecretToRef.name", xrName+"-"+in.Name); err != nil {
		return err
	}
	ready := resource.ReadyFalse
	seen, exists := observed[resource.Name(in.Name)]
	if exists && seen.Resource.GetCondition("Ready").Status == "True" {
		ready = resource.ReadyTrue
	}
	desired[resource.Name(in.Name)] = &resource.DesiredComposed{Resource: obj, Ready: ready}

	if exists {
		if at, err := seen.Resource.GetValue("status.atProvider"); err == nil {
			dxr, err := request.GetDesiredCompositeResource(req)
			if err != nil {
				return err
			}
			if err := dxr.Resource.SetValue("status.atProvider", at); err != nil {
				return err
			}
			if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
				return err
			}
		}
	}

	if in.AggregateConnectionSecret {
		data := map[string]any{}
		if exists {
			for k, v := range seen.ConnectionDetails {
				data[k] = base64.StdEncoding.EncodeToString(v)
			}
		}
		s := composed.New()
		s.SetAPIVersion("v1")
		s.SetKind("Secret")
		s.SetName(xrName + "-connection")
		if err := s.SetValue("data", data); err != nil {
			return err
		}
		sready := resource.ReadyFalse
		if len(data) > 0 {
			sready = resource.ReadyTrue
		}
		desired["connection-secret"] = &resource.DesiredComposed{Resource: s, Ready: sready}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return err
	}
	response.Normalf(rsp, "composed a %s for %s (ready: %s)", in.Compose.Kind, xrName, ready)
	return nil
}
