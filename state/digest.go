package state

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest hashes its parts so that a change in any of them changes the result: each part is
// length-prefixed, so that no two different lists of parts hash alike. It names what modkind
// records beside a state (the inputs applied) and what it derives from an instance (its state
// Secret's name).
func Digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, len(p); i < 8; i, l = i+1, l>>8 {
			n[i] = byte(l)
		}
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
