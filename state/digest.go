package state

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Digest hashes its parts so that a change in any of them changes the result: each part is
// length-prefixed, so that no two different lists of parts hash alike. It names what modkind
// records beside a state (the inputs applied) and what it derives from an instance (its state
// Secret's name).
func Digest(parts ...[]byte) string {
	return digest(sha256.New(), parts)
}

// KeyedDigest is Digest keyed with key (HMAC-SHA256). What modkind shows to whoever may read an
// instance or its Runs and derives from a Secret's value (the inputs digest of a Run, a plan's
// id) is keyed: an unkeyed hash would let a reader test guesses of the value against it.
func KeyedDigest(key []byte, parts ...[]byte) string {
	return digest(hmac.New(sha256.New, key), parts)
}

func digest(h hash.Hash, parts [][]byte) string {
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
