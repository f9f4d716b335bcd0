package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// bigState is a valid state of about size bytes that gzip cannot shrink much.
func bigState(t *testing.T, serial int64, size int) *State {
	t.Helper()
	noise := make([]byte, size*3/4)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	raw := fmt.Appendf(nil, `{"version":4,"serial":%d,"lineage":"big","outputs":{"blob":{"value":%q,"type":"string"}},"resources":[]}`,
		serial, base64.StdEncoding.EncodeToString(noise))
	st, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func stateSecrets(t *testing.T, cl client.Client) []corev1.Secret {
	t.Helper()
	l := &corev1.SecretList{}
	if err := cl.List(context.Background(), l, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestLargeStateIsChunked(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	s := &Store{Client: cl}
	ref := Ref{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "tfstate.big"}, Labels: map[string]string{"modkind.io/instance": "big"}}

	v1 := bigState(t, 1, 3<<20)
	if err := s.Put(ctx, ref, v1, "in-1"); err != nil {
		t.Fatal(err)
	}
	for _, sec := range stateSecrets(t, cl) {
		size := 0
		for _, v := range sec.Data {
			size += len(v)
		}
		if size > 1<<20 {
			t.Errorf("Secret %s holds %d bytes; a Secret holds at most 1 MiB", sec.Name, size)
		}
	}
	if n := len(stateSecrets(t, cl)); n < 4 {
		t.Errorf("a 3 MiB state that does not compress needs the state Secret and at least 3 chunks, got %d Secrets", n)
	}
	got, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Raw, v1.Raw) || got.AppliedInputs != "in-1" {
		t.Fatalf("a chunked state must read back whole")
	}

	// The next version replaces it; the version before stays recoverable, older ones go.
	v2 := bigState(t, 2, 3<<20)
	if err := s.Put(ctx, ref, v2, "in-2"); err != nil {
		t.Fatal(err)
	}
	v3 := bigState(t, 3, 3<<20)
	if err := s.Put(ctx, ref, v3, "in-3"); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Raw, v3.Raw) {
		t.Errorf("Get must return the newest version")
	}
	prev, err := s.Previous(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if prev == nil || !bytes.Equal(prev.Raw, v2.Raw) {
		t.Errorf("Previous must return the version before the newest")
	}
	// 3 MiB of noise in 400 KiB chunks: two versions' worth plus the state Secret.
	chunksPerVersion := (len(mustGzip(t, v3.Raw)) + DefaultInlineLimit - 1) / DefaultInlineLimit
	if n, want := len(stateSecrets(t, cl)), 1+2*chunksPerVersion; n != want {
		t.Errorf("want %d Secrets (state + current and previous chunks), got %d: older chunks must be pruned", want, n)
	}

	// Deleting removes every chunk too.
	if err := s.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if n := len(stateSecrets(t, cl)); n != 0 {
		t.Errorf("Delete must remove the state and all its chunks; %d Secrets remain", n)
	}
}

func TestChunkTampering(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	s := &Store{Client: cl, InlineLimit: 1 << 10}
	ref := Ref{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "tfstate.t"}}
	if err := s.Put(ctx, ref, bigState(t, 1, 8<<10), ""); err != nil {
		t.Fatal(err)
	}
	for _, sec := range stateSecrets(t, cl) {
		if sec.Labels[LabelChunkOf] != "" {
			sec.Data[KeyChunk] = []byte("garbage")
			if err := cl.Update(ctx, &sec); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := s.Get(ctx, ref); err == nil {
		t.Errorf("a chunk that changed underneath must be detected, not decoded")
	}
}

func TestSmallStateKeepsPreviousInline(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	s := &Store{Client: cl}
	ref := Ref{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "tfstate.s"}}
	v1, v2 := version(1, "l"), version(2, "l")
	if err := s.Put(ctx, ref, v1, ""); err != nil {
		t.Fatal(err)
	}
	if prev, err := s.Previous(ctx, ref); err != nil || prev != nil {
		t.Errorf("a first version has no previous one, got %v, %v", prev, err)
	}
	if err := s.Put(ctx, ref, v2, ""); err != nil {
		t.Fatal(err)
	}
	prev, err := s.Previous(ctx, ref)
	if err != nil || prev == nil || !bytes.Equal(prev.Raw, v1.Raw) {
		t.Errorf("Previous must return version 1, got %v, %v", prev, err)
	}
	if n := len(stateSecrets(t, cl)); n != 1 {
		t.Errorf("a small state and its previous version fit in one Secret, got %d", n)
	}
}

func mustGzip(t *testing.T, raw []byte) []byte {
	t.Helper()
	gz, err := compress(raw)
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

// A state that was never chunked is saved without listing the namespace's Secrets: at a
// thousand instances that list scanned thousands of Secrets on every save. Once a state was
// chunked, its chunks are still pruned when it shrinks.
func TestChunksListedOnlyWhenChunked(t *testing.T) {
	small := func(t *testing.T, serial int64) *State { return version(serial, "big") }
	cases := map[string]struct {
		reason     string
		puts       []func(*testing.T, int64) *State
		wantLists  int
		wantChunks int
	}{
		"NeverChunked": {
			reason:    "Small states have no chunks to prune.",
			puts:      []func(*testing.T, int64) *State{small, small, small},
			wantLists: 0,
		},
		"Shrinks": {
			reason: "A state that shrinks keeps the chunks of the version before it, then drops them.",
			puts: []func(*testing.T, int64) *State{
				func(t *testing.T, s int64) *State { return bigState(t, s, 3<<20) }, small, small,
			},
			wantLists:  3,
			wantChunks: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lists := 0
			cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
					lists++
					return c.List(ctx, l, opts...)
				},
			}).Build()
			s := &Store{Client: cl}
			ref := Ref{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "tfstate.x"}}
			for i, put := range tc.puts {
				if err := s.Put(context.Background(), ref, put(t, int64(i+1)), ""); err != nil {
					t.Fatal(err)
				}
			}
			got := lists
			chunks := 0
			for _, sec := range stateSecrets(t, cl) {
				if sec.Labels[LabelChunkOf] != "" {
					chunks++
				}
			}
			if got != tc.wantLists || chunks != tc.wantChunks {
				t.Errorf("%s\nlists of Secrets: want %d, got %d; chunks left: want %d, got %d", tc.reason, tc.wantLists, got, tc.wantChunks, chunks)
			}
		})
	}
}
