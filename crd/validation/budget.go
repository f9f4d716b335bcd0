package validation

// The cost limits the translations keep within, shared by the translator (validation.go) and the
// schema checks that stand in for rules over them (schema.go).

// The API server refuses a CRD when a rule's estimated cost exceeds 10^7 or the sum over the CRD
// exceeds 10^8 (StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit). modkind's own estimate is
// already above the server's; it keeps a further 10% and 20% for rules added elsewhere.
type costBudget struct{ rule, total int64 }

var (
	apiServerBudget = costBudget{rule: 9_000_000, total: 80_000_000}
	unlimited       = costBudget{rule: maxCost, total: maxCost}
)

// Parts cheaper than this are always kept: a module cannot have enough of them to matter.
const cheap = 1_000

// overBudget is said of every part of a condition left out for its cost.
const overBudget = "over the API server's CEL cost limit"
