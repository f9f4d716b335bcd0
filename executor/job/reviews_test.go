package job

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/artifact"
)

// fakeReviewer answers from accounts (token → "namespace/account"), counting the reviews asked.
type fakeReviewer struct {
	accounts map[string][2]string
	asked    int
}

func (f *fakeReviewer) Review(_ context.Context, token string) (string, string, error) {
	f.asked++
	a, ok := f.accounts[token]
	if !ok {
		return "", "", artifact.ErrUnauthenticated
	}
	return a[0], a[1], nil
}

// A runner's downloads of one Run cost one TokenReview: a token accepted less than reviewTTL ago
// is taken for the same account without asking again. A refused token is asked about each time,
// and an accepted one again once reviewTTL has passed, so a token that stopped being valid is
// refused no later than the API server's own token cache would.
func TestCachedReviewerAsksOncePerTokenWithinTTL(t *testing.T) {
	type call struct {
		token string
		after time.Duration // since the first call
	}
	type answer struct {
		Namespace, Account string
		Refused            bool
	}
	type want struct {
		answers []answer
		asked   int
	}
	cases := map[string]struct {
		reason string
		calls  []call
		want   want
	}{
		"SameTokenWithinTTL": {
			reason: "The bundle, the provider index and the version list of one Run are one review.",
			calls:  []call{{"pod-a", 0}, {"pod-a", 2 * time.Second}, {"pod-a", reviewTTL - time.Millisecond}},
			want:   want{answers: []answer{{"team-a", "modkind-runner", false}, {"team-a", "modkind-runner", false}, {"team-a", "modkind-runner", false}}, asked: 1},
		},
		"AgainAfterTTL": {
			reason: "An accepted token is reviewed again once reviewTTL has passed.",
			calls:  []call{{"pod-a", 0}, {"pod-a", reviewTTL}},
			want:   want{answers: []answer{{"team-a", "modkind-runner", false}, {"team-a", "modkind-runner", false}}, asked: 2},
		},
		"RefusedNeverKept": {
			reason: "A refused token is asked about every time: nothing is kept of it.",
			calls:  []call{{"forged", 0}, {"forged", time.Second}},
			want:   want{answers: []answer{{Refused: true}, {Refused: true}}, asked: 2},
		},
		"EachTokenItsOwn": {
			reason: "Another token, another review, and its own account.",
			calls:  []call{{"pod-a", 0}, {"pod-b", time.Second}},
			want:   want{answers: []answer{{"team-a", "modkind-runner", false}, {"team-b", "modkind-runner", false}}, asked: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next := &fakeReviewer{accounts: map[string][2]string{"pod-a": {"team-a", "modkind-runner"}, "pod-b": {"team-b", "modkind-runner"}}}
			start := time.Now()
			now := start
			c := newCachedReviewer(next)
			c.now = func() time.Time { return now }
			var got []answer
			for _, cl := range tc.calls {
				now = start.Add(cl.after)
				ns, sa, err := c.Review(context.Background(), cl.token)
				if err != nil && !errors.Is(err, artifact.ErrUnauthenticated) {
					t.Fatalf("%s\nReview: %v", tc.reason, err)
				}
				got = append(got, answer{Namespace: ns, Account: sa, Refused: err != nil})
			}
			if diff := cmp.Diff(tc.want.answers, got); diff != "" {
				t.Errorf("%s\nanswers, -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.asked, next.asked); diff != "" {
				t.Errorf("%s\nTokenReviews made, -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
