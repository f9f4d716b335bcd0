package main

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// followRunsOnce lists the Runs of namespace ns, calls listed, then see with each of them, and
// watches them from there, calling see with each Run an event carries (gone for a deletion), until
// the watch ends (nil: list again) or ctx does.
func followRunsOnce(ctx context.Context, c client.WithWatch, ns string, listed func(), see func(r *v1alpha1.Run, gone bool)) error {
	l := &v1alpha1.RunList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return err
	}
	listed()
	for i := range l.Items {
		see(&l.Items[i], false)
	}
	w, err := c.Watch(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.ResourceVersion}})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil // Expired: list again.
			}
			if r, ok := ev.Object.(*v1alpha1.Run); ok {
				see(r, ev.Type == watch.Deleted)
			}
		}
	}
}
