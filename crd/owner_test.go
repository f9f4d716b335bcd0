package crd

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// longName is a valid Module name (a DNS subdomain) of n characters: labels of up to 63
// characters, each starting with prefix's letter, joined by dots.
func longName(prefix string, n int) string {
	var parts []string
	for rest := n; rest > 0; {
		size := rest
		if size > 63 {
			// Leave room for a dot and a label of at least one character.
			size = min(63, rest-2)
		}
		parts = append(parts, (prefix + strings.Repeat("x", size))[:size])
		rest -= size + 1
	}
	return strings.Join(parts, ".")
}

func TestModuleLabelValue(t *testing.T) {
	at63, at64, at253 := longName("a", 63), longName("a", 64), longName("a", 253)
	for _, n := range []string{at63, at64, at253} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 || !strings.HasPrefix(n, "a") {
			t.Fatalf("longName made %q, not a Module name: %v", n, errs)
		}
	}
	if len(at63) != 63 || len(at64) != 64 || len(at253) != 253 {
		t.Fatalf("longName made names of %d, %d and %d characters", len(at63), len(at64), len(at253))
	}
	cases := map[string]struct {
		reason string
		module string
		// want is the label's value; "" means a hashed value, checked below.
		want string
	}{
		"Short":   {reason: "A name that fits is the label's value, as before.", module: "my-bucket", want: "my-bucket"},
		"Dotted":  {reason: "Dots are allowed in label values.", module: "team.bucket", want: "team.bucket"},
		"At63":    {reason: "63 characters still fit.", module: at63, want: at63},
		"At64":    {reason: "64 characters do not fit: the value is derived from the name.", module: at64},
		"Longest": {reason: "A Module name can be 253 characters long.", module: at253},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ModuleLabelValue(tc.module)
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("\n%s\nModuleLabelValue(%q) = %q is not a label value: %v", tc.reason, tc.module, got, errs)
			}
			if tc.want != "" {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("\n%s\nModuleLabelValue: -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if !strings.HasPrefix(got, tc.module[:hashedPrefix]+"_") || len(got) != validation.LabelValueMaxLength {
				t.Errorf("\n%s\nA long name's value should start with the name's first characters and an underscore, 63 long; got %q", tc.reason, got)
			}
			if again := ModuleLabelValue(tc.module); again != got {
				t.Errorf("\nThe value must be stable: selectors written earlier must keep matching.\n%q then %q", got, again)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) == 0 {
				t.Errorf("\nA hashed value should never be a Module's name, so that it names no other Module: %q", got)
			}
		})
	}
	// Long names that share their first characters still get values of their own.
	other := at253[:252] + "b"
	if ModuleLabelValue(other) == ModuleLabelValue(at253) {
		t.Errorf("\nTwo long names differing at their end should have different label values: both %q", ModuleLabelValue(other))
	}
}

func TestModuleOf(t *testing.T) {
	long := longName("m", 200)
	obj := func(labels, annotations map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Labels: labels, Annotations: annotations}
	}
	type want struct {
		Module  string
		OwnedBy bool
	}
	cases := map[string]struct {
		reason string
		o      metav1.Object
		module string
		want   want
	}{
		"Current": {
			reason: "A CRD of a long-named Module: the annotation has the name, the label a value that fits.",
			o:      obj(map[string]string{LabelModule: ModuleLabelValue(long)}, map[string]string{AnnotationModule: long}),
			module: long, want: want{Module: long, OwnedBy: true},
		},
		"CurrentShort": {
			reason: "A CRD of a short-named Module has the name in both.",
			o:      obj(map[string]string{LabelModule: "db"}, map[string]string{AnnotationModule: "db"}),
			module: "db", want: want{Module: "db", OwnedBy: true},
		},
		"OlderVersion": {
			reason: "CRDs written before the annotation have the name in the label only; they stay owned.",
			o:      obj(map[string]string{LabelModule: "db"}, nil),
			module: "db", want: want{Module: "db", OwnedBy: true},
		},
		"OtherModule": {
			reason: "A CRD of another Module is not owned.",
			o:      obj(map[string]string{LabelModule: "db"}, map[string]string{AnnotationModule: "db"}),
			module: "cache", want: want{Module: "db"},
		},
		"PrefixOfLongName": {
			reason: "Another Module whose name is a long name's first characters owns nothing of it.",
			o:      obj(map[string]string{LabelModule: ModuleLabelValue(long)}, map[string]string{AnnotationModule: long}),
			module: long[:hashedPrefix], want: want{Module: long},
		},
		"LabelDisagrees": {
			reason: "An annotation naming a Module on a CRD without that Module's label is not that Module's: the label is what watches and caches select.",
			o:      obj(map[string]string{LabelModule: "other"}, map[string]string{AnnotationModule: "db"}),
			module: "db", want: want{Module: "db"},
		},
		"AnnotationOnly": {
			reason: "Without the label a CRD is not modkind's, whatever its annotations say.",
			o:      obj(nil, map[string]string{AnnotationModule: "db"}),
			module: "db", want: want{Module: "db"},
		},
		"Foreign": {
			reason: "A CRD modkind did not generate names no Module.",
			o:      obj(map[string]string{"app": "x"}, nil),
			module: "", want: want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{Module: ModuleOf(tc.o), OwnedBy: OwnedBy(tc.o, tc.module)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nModuleOf, OwnedBy(%q): -want, +got:\n%s", tc.reason, tc.module, diff)
			}
		})
	}
}

// TestLongModuleNameAPIServer installs the CRD of a Module with the longest name Kubernetes
// allows: the API server must accept it, and the CRD must still be found by modkind's selector
// and name its Module in full.
func TestLongModuleNameAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	name := longName("l", 253)
	m := &module.Module{Digest: crdtest.Digest, Variables: []module.Variable{{Name: "size", Type: cty.Number, Nullable: true}}}
	c, err := Synthesize(name, v1alpha1.CRDNames{Group: "longname.example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatal(err)
	}

	// The premise: the Module's name as a label value is refused.
	raw := c.DeepCopy()
	raw.Labels[LabelModule] = name
	if err := cl.Create(ctx, raw, client.DryRunAll); !apierrors.IsInvalid(err) {
		t.Fatalf("\nThe API server should refuse a label value of 253 characters; Create: %v", err)
	}

	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("\nThe API server should accept the CRD of a Module with a 253-character name.\n%v", err)
	}
	var list extv1.CustomResourceDefinitionList
	if err := cl.List(ctx, &list, client.MatchingLabelsSelector{Selector: OwnedSelector()}); err != nil {
		t.Fatal(err)
	}
	var found *extv1.CustomResourceDefinition
	for i := range list.Items {
		if list.Items[i].Name == c.Name {
			found = &list.Items[i]
		}
	}
	if found == nil {
		t.Fatalf("\nOwnedSelector should select the CRD of a long-named Module.")
	}
	if got := ModuleOf(found); got != name {
		t.Errorf("\nThe stored CRD should name its Module in full.\nModuleOf: %q", got)
	}
	if !OwnedBy(found, name) || OwnedBy(found, name[:hashedPrefix]) {
		t.Errorf("\nThe stored CRD should be owned by its Module and no other.")
	}
	sel := labels.SelectorFromSet(labels.Set{LabelModule: ModuleLabelValue(name)})
	if err := cl.List(ctx, &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != c.Name {
		t.Errorf("\nSelecting by the Module's label value should find its CRD only; found %d", len(list.Items))
	}
}
