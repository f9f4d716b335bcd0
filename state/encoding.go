package state

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"sync"

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

// gzipWriters and gzipReaders keep the compressors and decompressors of states between uses: a
// gzip writer allocates close to a MiB of tables, and every stored state took a new one; at
// thousands of runs that was most of what the controller allocated, and so how large its heap grew
// between collections.
var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders sync.Pool
)

func compress(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&b)
	if _, err := w.Write(raw); err != nil {
		return nil, errors.Wrap(err, errCompress)
	}
	if err := w.Close(); err != nil {
		return nil, errors.Wrap(err, errCompress)
	}
	return b.Bytes(), nil
}

// errTooLarge says a state decompresses to more than its reader allows; errSizeMismatch that it
// decompresses to another size than its gzip trailer says.
var (
	errTooLarge     = errors.New("state too large")
	errSizeMismatch = errors.New("state size differs from its gzip trailer")
)

// decompress inflates gz, refusing to hold more than max bytes: a gzip stream of a few hundred KiB
// inflates to hundreds of MiB. The size gzip records in its trailer (modulo 4 GiB; a state is one
// gzip member, as compress writes it) is taken as the truth: one larger than max is refused before
// anything is inflated, and a stream that inflates to more than it says is refused as soon as it
// does, so a read never holds more than the size the trailer declared.
func decompress(gz []byte, max int64) ([]byte, error) {
	if len(gz) < 18 || gz[0] != 0x1f || gz[1] != 0x8b {
		return nil, errors.New(errDecompress + ": not gzip")
	}
	size := int64(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
	if size > max {
		return nil, errTooLarge
	}
	r, _ := gzipReaders.Get().(*gzip.Reader)
	if r == nil {
		r = new(gzip.Reader)
	}
	defer gzipReaders.Put(r)
	if err := r.Reset(bytes.NewReader(gz)); err != nil {
		return nil, errors.Wrap(err, errDecompress)
	}
	r.Multistream(false)
	raw := make([]byte, size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, errors.Wrap(err, errDecompress)
	}
	// Nothing may follow: a byte more is a stream that lied about its size.
	var extra [1]byte
	if n, _ := r.Read(extra[:]); n > 0 {
		return nil, errSizeMismatch
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, errors.Wrap(err, errDecompress)
	}
	return raw, nil
}
