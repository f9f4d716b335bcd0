package job

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/modkind/modkind/artifact"
)

// reviewTTL is how long the artifact server takes a token it had reviewed for the service account
// the review named: as long as the API server itself keeps a token it authenticated (its token
// cache, 10 s), so a pod whose token stopped being valid is refused no later than the API server
// would refuse it.
const reviewTTL = 10 * time.Second

// maxReviews bounds the reviews kept: past it, those expired are dropped at the next review.
const maxReviews = 1024

// cachedReviewer asks next about a token it has not seen within reviewTTL. A runner's downloads
// of one Run (its bundle, then its init's provider index and version lists) come within seconds
// of each other with the same token, and each review is a write to the API server (a TokenReview
// create): one per Run instead of one per download. Only accepted tokens are kept, by their
// SHA-256, never the token itself; a refused or unreviewable one is asked about again.
type cachedReviewer struct {
	next artifact.TokenReviewer
	now  func() time.Time

	mu   sync.Mutex
	seen map[[sha256.Size]byte]reviewed
}

// reviewed is the service account a token was reviewed as, and when.
type reviewed struct {
	namespace, serviceAccount string
	at                        time.Time
}

func newCachedReviewer(next artifact.TokenReviewer) *cachedReviewer {
	return &cachedReviewer{next: next, now: time.Now, seen: map[[sha256.Size]byte]reviewed{}}
}

func (c *cachedReviewer) Review(ctx context.Context, token string) (string, string, error) {
	key := sha256.Sum256([]byte(token))
	now := c.now()
	c.mu.Lock()
	r, ok := c.seen[key]
	c.mu.Unlock()
	if ok && now.Sub(r.at) < reviewTTL {
		return r.namespace, r.serviceAccount, nil
	}
	ns, sa, err := c.next.Review(ctx, token)
	if err != nil {
		return "", "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) >= maxReviews {
		for k, v := range c.seen {
			if now.Sub(v.at) >= reviewTTL {
				delete(c.seen, k)
			}
		}
	}
	if len(c.seen) < maxReviews {
		c.seen[key] = reviewed{namespace: ns, serviceAccount: sa, at: now}
	}
	return ns, sa, nil
}
