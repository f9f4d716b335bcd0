package state

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// DuplicateKey returns the first key that some object of the JSON document raw holds twice, where
// two keys that differ only in case count as the same: terraform, like every reader built on Go's
// encoding/json, takes the last of them (and matches names without regard to case), while a person
// reading the document sees the first. A state with one can show a reviewer one thing and run
// another, so it is never signed. It returns "" when there is none or raw is not JSON.
func DuplicateKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dup, _ := duplicateIn(dec)
	return dup
}

// duplicateIn reads one JSON value from dec and returns the first duplicate key within it.
func duplicateIn(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return "", nil
	}
	switch delim {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return "", err
			}
			key, _ := keyTok.(string)
			folded := strings.ToLower(key)
			if seen[folded] {
				return key, nil
			}
			seen[folded] = true
			if dup, err := duplicateIn(dec); dup != "" || err != nil {
				return dup, err
			}
		}
	case '[':
		for dec.More() {
			if dup, err := duplicateIn(dec); dup != "" || err != nil {
				return dup, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return "", err
}

// errDuplicateKey refuses to sign a state in which an object holds a key twice.
const errDuplicateKey = "not signed: the state holds key %q twice in one object (or twice but for case): terraform reads the last one, a reviewer sees the first"

// checkNoDuplicateKey returns an error naming the key when raw holds one twice in an object.
func checkNoDuplicateKey(raw []byte) error {
	if dup := DuplicateKey(raw); dup != "" {
		return errors.Errorf(errDuplicateKey, dup)
	}
	return nil
}
