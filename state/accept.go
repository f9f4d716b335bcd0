package state

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// ReviewDigest names what a reviewer of this state was shown: the SHA-256 of the state's bytes,
// decompressed and assembled from all its chunks, and the resourceVersion of the state Secret
// they were read from. Accept signs a state only given the review digest of what is stored then.
func (s *Stored) ReviewDigest() string { return reviewDigest(s.Raw, s.Version) }

func reviewDigest(raw []byte, version string) string {
	return reviewPrefix + sha(raw) + "@" + version
}

// A NotReviewedError refuses to sign a state that is not the one reviewed: the state Secret was
// written since (or another instance's state was reviewed), or its bytes are not those shown.
type NotReviewedError struct {
	Secret types.NamespacedName
	// Reason says what differs.
	Reason string
}

func (e *NotReviewedError) Error() string {
	return fmt.Sprintf("not signed: the state of Secret %s is not the one reviewed: %s; review it again with modkind state show", e.Secret, e.Reason)
}

// parseReviewDigest splits a review digest into the SHA-256 of the state and the resourceVersion.
func parseReviewDigest(d string) (string, string, error) {
	if d == "" {
		return "", "", errors.New(errNoReview)
	}
	sum, version, ok := strings.Cut(strings.TrimPrefix(d, reviewPrefix), "@")
	if !strings.HasPrefix(d, reviewPrefix) || !ok || !hexDigest.MatchString(sum) || version == "" {
		return "", "", errors.Errorf("%s: %q", errBadReview, d)
	}
	return sum, version, nil
}

// Accept signs the state stored for ref as it is, once a cluster admin has reviewed it: the
// controller then runs with it. reviewed is the state's ReviewDigest as the admin was shown it:
// the state is signed only if the state Secret is still at the resourceVersion shown and its
// bytes, assembled from its chunks, still hash to what was shown (*NotReviewedError otherwise),
// so that a state swapped between review and accept is never signed. The state must be well
// formed and within the read limits; it is returned as accepted.
func (s *Store) Accept(ctx context.Context, ref Ref, reviewed string) (*Stored, error) {
	if s.Keys == nil {
		return nil, errors.New("cannot accept a state without the state signing keys")
	}
	wantSum, wantVersion, err := parseReviewDigest(reviewed)
	if err != nil {
		return nil, err
	}
	sec, _, err := s.secret(ctx, ref)
	if err != nil {
		return nil, err
	}
	if sec == nil {
		return nil, errors.Errorf("there is no state Secret %s in namespace %s", ref.Name, ref.Namespace)
	}
	secret := types.NamespacedName{Namespace: sec.Namespace, Name: sec.Name}
	if sec.ResourceVersion != wantVersion {
		return nil, &NotReviewedError{Secret: secret, Reason: fmt.Sprintf("it was written since: it was shown at resourceVersion %s, it is at %s now", wantVersion, sec.ResourceVersion)}
	}
	// The bytes are read once, here: what is hashed is what is signed. Chunks are checked against
	// the digest the state Secret records, which the signature covers, so a chunk swapped later
	// fails every read of the signed state.
	gz, err := s.compressed(ctx, sec)
	if err != nil {
		return nil, err
	}
	raw, err := s.inflate(sec, gz)
	if err != nil {
		return nil, err
	}
	if got := sha(raw); got != wantSum {
		return nil, &NotReviewedError{Secret: secret, Reason: fmt.Sprintf("its bytes hash to %s, not to the %s shown", got, wantSum)}
	}
	if err := checkNoDuplicateKey(raw); err != nil {
		return nil, err
	}
	st, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	// The inputs recorded beside the state are the tenant's word, and state show does not show
	// them: they are signed empty, so that the controller plans the accepted state against the
	// instance's inputs rather than taking it as applied from them.
	const applied = ""
	delete(sec.Annotations, AnnotationApplied)
	if err := s.sign(ctx, sec, secret, applied, gz); err != nil {
		return nil, err
	}
	// The update carries the resourceVersion reviewed: a write made since, to the state or to the
	// inputs recorded beside it, is refused, not signed.
	if err := s.Client.Update(ctx, sec); err != nil {
		if kerrors.IsConflict(err) || kerrors.IsNotFound(err) {
			return nil, &NotReviewedError{Secret: secret, Reason: "it was written while it was being signed"}
		}
		return nil, errors.Wrap(err, errUpdateSecret)
	}
	return &Stored{State: st, AppliedInputs: applied, Version: sec.ResourceVersion, secret: sec}, nil
}
