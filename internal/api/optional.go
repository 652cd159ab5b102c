package api

import (
	"bytes"
	"encoding/json"
)

// Optional is a request member that may be absent, null, or set. Partial updates need all
// three: absent leaves a field unchanged, null clears it, a value replaces it. Tag fields
// `json:",omitzero"` so that an absent member stays absent when a client sends it.
type Optional[T any] struct {
	Value T
	Set   bool // the member was present
	Null  bool // the member was present and null
}

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{Value: v, Set: true} }

// Null returns an Optional that clears its member.
func Null[T any]() Optional[T] { return Optional[T]{Set: true, Null: true} }

// IsZero reports an absent member, for omitzero.
func (o Optional[T]) IsZero() bool { return !o.Set }

// Present reports a member that was sent with a value (not absent, not null).
func (o Optional[T]) Present() bool { return o.Set && !o.Null }

// Ptr returns the value as a pointer: nil for null or absent.
func (o Optional[T]) Ptr() *T {
	if !o.Present() {
		return nil
	}
	v := o.Value
	return &v
}

// MarshalJSON writes null or the value.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.Null || !o.Set {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// UnmarshalJSON records presence; encoding/json calls it for a null member too.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	*o = Optional[T]{Set: true}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	// Strict like the request decoder: an object value may not carry unknown members.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(&o.Value)
}
