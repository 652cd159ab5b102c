package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// DateTimeLayout is the service's compact ISO 8601 basic form, yyyyMMdd'T'HHmmss+0000.
const DateTimeLayout = "20060102T150405-0700"

// DateTime is a point in time on the wire. It is written in UTC and read with any numeric
// offset.
type DateTime struct{ time.Time }

// NewDateTime returns t truncated to whole seconds, the wire's precision.
func NewDateTime(t time.Time) DateTime { return DateTime{t.Truncate(time.Second)} }

// ParseDateTime reads s in DateTimeLayout.
func ParseDateTime(s string) (DateTime, error) {
	// time.Parse would also take fractional seconds; the wire form has exactly 20 characters.
	if len(s) != len("20060102T150405+0000") {
		return DateTime{}, fmt.Errorf("date-time %q is not in the form yyyyMMddTHHmmss+0000", s)
	}
	t, err := time.Parse(DateTimeLayout, s)
	if err != nil {
		return DateTime{}, fmt.Errorf("date-time %q is not in the form yyyyMMddTHHmmss+0000", s)
	}
	// An offset can carry the first or last day of years 0000 and 9999 out of four digits in
	// UTC, where the wire form cannot express it.
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return DateTime{}, fmt.Errorf("date-time %q is out of range in UTC", s)
	}
	return DateTime{t.UTC()}, nil
}

// String returns the wire form.
func (d DateTime) String() string { return d.UTC().Format(DateTimeLayout) }

// MarshalJSON writes the wire form in UTC.
func (d DateTime) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(DateTimeLayout)+2)
	b = append(b, '"')
	b = d.UTC().AppendFormat(b, DateTimeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads the wire form.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[DateTime]()}
	}
	t, err := ParseDateTime(s)
	if err != nil {
		// A type error, so that the decoder names the member at fault.
		return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[DateTime]()}
	}
	*d = t
	return nil
}
