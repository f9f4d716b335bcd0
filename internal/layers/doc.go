// Package layers holds no code: its test writes down, once, which of modkind's packages may
// import which, and fails when an import goes against that order. Read its table to see the
// architecture's layers from the bottom up.
package layers
