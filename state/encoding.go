package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errParse      = "cannot parse Terraform state"
	errCompress   = "cannot compress Terraform state"
	errDecompress = "cannot decompress Terraform state"
)

// State is one version of a Terraform state file.
type State struct {
	// Raw is the state file as Terraform wrote it.
	Raw []byte
	// Serial and Lineage are Terraform's own: a state only ever moves to a higher serial of the
	// same lineage.
	Serial  int64
	Lineage string
}

// Parse reads a state file's serial and lineage.
func Parse(raw []byte) (*State, error) {
	var head struct {
		Serial  int64  `json:"serial"`
		Lineage string `json:"lineage"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, errors.Wrap(err, errParse)
	}
	return &State{Raw: raw, Serial: head.Serial, Lineage: head.Lineage}, nil
}

// Output is an output value recorded in a state file.
type Output struct {
	Value     json.RawMessage `json:"value"`
	Sensitive bool            `json:"sensitive"`
}

// Outputs returns the root module outputs recorded in the state.
func (s *State) Outputs() (map[string]Output, error) {
	var body struct {
		Outputs map[string]Output `json:"outputs"`
	}
	if err := json.Unmarshal(s.Raw, &body); err != nil {
		return nil, errors.Wrap(err, errParse)
	}
	return body.Outputs, nil
}

// ResourceCount is how many resources the state tracks.
func (s *State) ResourceCount() (int, error) {
	var body struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(s.Raw, &body); err != nil {
		return 0, errors.Wrap(err, errParse)
	}
	return len(body.Resources), nil
}

func compress(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(raw); err != nil {
		return nil, errors.Wrap(err, errCompress)
	}
	if err := w.Close(); err != nil {
		return nil, errors.Wrap(err, errCompress)
	}
	return b.Bytes(), nil
}

func decompress(gz []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, errors.Wrap(err, errDecompress)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, errors.Wrap(err, errDecompress)
	}
	return raw, nil
}
