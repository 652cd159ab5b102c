package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Envelope member names.
const (
	KeyAccount  = "account"
	KeyVehicle  = "vehicle"
	KeyResult   = "result"
	ResultOK    = "OK"
	ActionNext  = "next"
	ActionPrev  = "previous"
	MaxBodySize = 1 << 20 // request bodies on the data API
)

// Envelope is the body of every successful data API response: the data under a member named
// after the resource, then totalRecords and actions.
//
//	{"vehicle": {...}, "totalRecords": null, "actions": []}
type Envelope[T any] struct {
	Key          string // member holding Data: KeyVehicle, KeyAccount, KeyResult, ...
	Data         T
	TotalRecords *int
	Actions      []Action
}

// Action is a link to a related request, such as the next page of a list.
type Action struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// Single wraps one resource: totalRecords is null.
func Single[T any](key string, v T) Envelope[T] {
	return Envelope[T]{Key: key, Data: v}
}

// List wraps one page of a list with the total number of matching records.
func List[T any](key string, page []T, total int, actions []Action) Envelope[[]T] {
	if page == nil {
		page = []T{}
	}
	return Envelope[[]T]{Key: key, Data: page, TotalRecords: &total, Actions: actions}
}

// Deleted is the body of a successful delete.
func Deleted() Envelope[string] {
	one := 1
	return Envelope[string]{Key: KeyResult, Data: ResultOK, TotalRecords: &one}
}

// Action returns the URI of the action called name, or "".
func (e Envelope[T]) Action(name string) string {
	for _, a := range e.Actions {
		if a.Name == name {
			return a.URI
		}
	}
	return ""
}

// MarshalJSON writes the members in the seed's order.
func (e Envelope[T]) MarshalJSON() ([]byte, error) {
	data, err := marshal(e.Data)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(e.Key)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + 64)
	b.WriteByte('{')
	b.Write(key)
	b.WriteByte(':')
	b.Write(data)
	b.WriteString(`,"totalRecords":`)
	if e.TotalRecords == nil {
		b.WriteString("null")
	} else {
		fmt.Fprintf(&b, "%d", *e.TotalRecords)
	}
	b.WriteString(`,"actions":`)
	actions := e.Actions
	if actions == nil {
		actions = []Action{}
	}
	a, err := marshal(actions)
	if err != nil {
		return nil, err
	}
	b.Write(a)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping: "&" in a link stays "&", not "\u0026".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads an envelope. When Key is empty it takes the one member that is not
// totalRecords or actions, and sets Key to its name.
func (e *Envelope[T]) UnmarshalJSON(b []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return err
	}
	if raw, ok := members["totalRecords"]; ok {
		if err := json.Unmarshal(raw, &e.TotalRecords); err != nil {
			return fmt.Errorf("envelope totalRecords: %w", err)
		}
		delete(members, "totalRecords")
	}
	if raw, ok := members["actions"]; ok {
		if err := json.Unmarshal(raw, &e.Actions); err != nil {
			return fmt.Errorf("envelope actions: %w", err)
		}
		delete(members, "actions")
	}
	if e.Key == "" {
		if len(members) != 1 {
			return fmt.Errorf("envelope has %d data members, want 1", len(members))
		}
		for k := range members {
			e.Key = k
		}
	}
	raw, ok := members[e.Key]
	if !ok {
		return fmt.Errorf("envelope has no %q member", e.Key)
	}
	return json.Unmarshal(raw, &e.Data)
}
