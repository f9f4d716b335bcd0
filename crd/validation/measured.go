package validation

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"

	"github.com/modkind/modkind/module"
)

// measuredJSON is what the differential test against terraform (differential_test.go) found of
// each validation block of the bundled corpus (testdata/public), by measuredKey. The test writes
// it; a block whose declaration or rule changed since has no entry.
//
//go:embed measured.json
var measuredJSON []byte

var measured = func() map[string]string {
	out := map[string]string{}
	if err := json.Unmarshal(measuredJSON, &out); err != nil {
		panic("measured.json: " + err.Error())
	}
	return out
}()

// measuredKey names a block by what decides its verdict: the variable's name and type, the
// block's condition and message, and the rule it became.
func measuredKey(v module.Variable, val module.Validation, rule string) string {
	h := sha256.New()
	for _, s := range []string{v.Name, v.TypeExpr, val.Condition, val.ErrorMessage, rule} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// measuredOf is what the differential test found of the block at pos of v, "" when it has not
// measured it.
func measuredOf(v module.Variable, pos, rule string) string {
	for _, val := range v.Validations {
		if val.Pos == pos {
			return measured[measuredKey(v, val, rule)]
		}
	}
	return ""
}
