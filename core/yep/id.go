package yep

import (
	"bytes"
	"errors"
	"strconv"
)

// An ID is a JSON-RPC request id: a JSON string or integer, kept as its raw
// bytes so a peer's id is echoed back exactly (no float64 round trip). The
// zero ID is absent.
type ID []byte

// IntID returns the ID for n.
func IntID(n int64) ID { return strconv.AppendInt(nil, n, 10) }

// Int64 returns the integer value of an integer ID.
func (id ID) Int64() (int64, bool) {
	if len(id) == 0 || id[0] == '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return n, err == nil
}

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return len(id) == 0 || string(id) == "null" }

// String returns the raw JSON text of the ID.
func (id ID) String() string { return string(id) }

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return id, nil
}

var errBadID = errors.New("request id must be a string or an integer")

// UnmarshalJSON implements json.Unmarshaler. It accepts a string or an
// integer; anything else is an error.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if err := ValidateID(b); err != nil {
		return err
	}
	*id = append((*id)[:0], b...)
	return nil
}

// ValidateID reports whether b is a valid raw id: a JSON string or an
// integer literal.
func ValidateID(b []byte) error {
	if len(b) == 0 {
		return errBadID
	}
	if b[0] == '"' {
		if len(b) < 2 || b[len(b)-1] != '"' {
			return errBadID
		}
		return nil
	}
	i := 0
	if b[0] == '-' {
		i = 1
	}
	if i == len(b) {
		return errBadID
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return errBadID
		}
	}
	return nil
}
