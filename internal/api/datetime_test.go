package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

func TestParseDateTimeOffsets(t *testing.T) {
	// Every input names the same instant; the offset decides the local wall clock.
	want := time.Date(2026, 11, 22, 2, 34, 33, 0, time.UTC)
	for _, s := range []string{
		"20261122T023433+0000",
		"20261122T023433-0000",
		"20261121T213433-0500",
		"20261122T080433+0530",
		"20261122T163433+1400",
		"20261121T143433-1200",
	} {
		d, err := api.ParseDateTime(s)
		if err != nil {
			t.Errorf("ParseDateTime(%q): %v", s, err)
			continue
		}
		if !d.Equal(want) {
			t.Errorf("ParseDateTime(%q) = %v, want %v", s, d.Time, want)
		}
		if d.Location() != time.UTC {
			t.Errorf("ParseDateTime(%q) is in %v, want UTC", s, d.Location())
		}
		if got := d.String(); got != "20261122T023433+0000" {
			t.Errorf("ParseDateTime(%q).String() = %q", s, got)
		}
	}
}

func TestParseDateTimeCrossesDateLines(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"20261231T220000-0300", "20270101T010000+0000"}, // into the next year
		{"20270101T050000+1400", "20261231T150000+0000"}, // back into the previous one
		{"20280229T235959-0001", "20280301T000059+0000"}, // leap day, then March
		{"00000101T000000+0000", "00000101T000000+0000"}, // the first representable second
		{"99991231T235959+0000", "99991231T235959+0000"}, // and the last
		{"00000101T120000+1200", "00000101T000000+0000"}, // an offset that just stays in year 0
	} {
		d, err := api.ParseDateTime(tc.in)
		if err != nil {
			t.Errorf("ParseDateTime(%q): %v", tc.in, err)
			continue
		}
		if got := d.String(); got != tc.out {
			t.Errorf("ParseDateTime(%q).String() = %q, want %q", tc.in, got, tc.out)
		}
	}
}

func TestParseDateTimeRejects(t *testing.T) {
	for _, s := range []string{
		"",
		"20261122T023433.123+0000", // fractional seconds
		"20261122T023433.1+0000",
		"20261122T023433Z",      // Z is not a numeric offset
		"2026-11-22T02:34:33Z",  // RFC 3339
		"20261122 023433+0000",  // missing T
		"20261122t023433+0000",  // lower-case t
		"20261122023433+00000",  // 20 characters without the T
		"20261122T023433+000",   // 19 characters
		"20261122T023433+00000", // 21 characters
		"20261122T023433+05:30", // extended-form offset
		"20261122T023433+5:30",  // 20 characters, extended-form offset
		"20261122T023433 0000",  // unsigned offset
		"2026112aT023433+0000",  // non-digits
		"20261122T02343a+0000",
		"2026112 T023433+0000",
		"+0261122T023433+0000",     // a sign where the year is
		"２0261122T023433+0000",     // a full-width digit
		"20261302T000000+0000",     // month 13
		"20260001T000000+0000",     // month 0
		"20260100T000000+0000",     // day 0
		"20260230T000000+0000",     // 30 February
		"20270229T000000+0000",     // 29 February of a common year
		"20261131T000000+0000",     // 31 November
		"20261122T240000+0000",     // hour 24
		"20261122T236000+0000",     // minute 60
		"20261122T235960+0000",     // second 60 (no leap seconds)
		"00000101T000000+0100",     // year -1 in UTC: not four digits
		"99991231T235959-1400",     // year 10000 in UTC: not four digits
		"99991231T235959-0000\n",   // trailing newline
		" 20261122T023433+0000",    // leading space
		"20261122T023433+0000\x00", // trailing NUL
	} {
		if d, err := api.ParseDateTime(s); err == nil {
			t.Errorf("ParseDateTime(%q) = %v, want an error", s, d.Time)
		}
	}
}

func TestDateTimeOutputIsUTC(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*60*60)
	d := api.NewDateTime(time.Date(2026, 11, 22, 11, 34, 33, 999_999_999, tokyo))
	// Truncated to the second, never rounded up to the next one.
	if got := d.String(); got != "20261122T023433+0000" {
		t.Errorf("String() = %q", got)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `"20261122T023433+0000"` {
		t.Errorf("MarshalJSON = %s", b)
	}
	// The zero DateTime is still 20 characters, not something the parser refuses.
	if got := (api.DateTime{}).String(); got != "00010101T000000+0000" {
		t.Errorf("zero DateTime = %q", got)
	}
}

func TestDateTimeJSONRoundTrip(t *testing.T) {
	type doc struct {
		At    api.DateTime  `json:"at"`
		Maybe *api.DateTime `json:"maybe"`
	}
	in := doc{At: api.NewDateTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"at":"20260102T030405+0000","maybe":null}` {
		t.Errorf("marshal = %s", b)
	}
	var out doc
	if err := json.Unmarshal([]byte(`{"at":"20260101T220405-0500","maybe":"20260102T030405+0000"}`), &out); err != nil {
		t.Fatal(err)
	}
	if !out.At.Equal(in.At.Time) || out.Maybe == nil || !out.Maybe.Equal(in.At.Time) {
		t.Errorf("unmarshal = %+v", out)
	}
}

func TestDateTimeJSONTypeErrors(t *testing.T) {
	// The request decoder names the member at fault only for *json.UnmarshalTypeError.
	for _, member := range []string{`5`, `true`, `{}`, `[]`, `"20261122T023433Z"`, `"yesterday"`, `""`} {
		var v struct {
			At api.DateTime `json:"at"`
		}
		err := json.Unmarshal([]byte(`{"at":`+member+`}`), &v)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Errorf("at=%s: error %v (%T), want *json.UnmarshalTypeError", member, err, err)
			continue
		}
		if te.Type.Name() != "DateTime" {
			t.Errorf("at=%s: error type %v, want DateTime", member, te.Type)
		}
		if te.Field != "at" {
			t.Errorf("at=%s: error field %q, want at", member, te.Field)
		}
	}
}

// FuzzParseDateTime checks that whatever the parser accepts, the service can write back in
// the wire form and read again as the same instant.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{
		"20261122T023433+0000",
		"20261121T213433-0500",
		"20261122T080433+0530",
		"20261122T163433+1400",
		"00000101T000000+0100",
		"99991231T235959-1400",
		"20261122T023433+2460",
		"20261122T023433.123+0000",
		"20261122T023433Z",
		"20260230T000000+0000",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := api.ParseDateTime(s)
		if err != nil {
			return
		}
		out := d.String()
		if len(out) != 20 || !strings.HasSuffix(out, "+0000") {
			t.Fatalf("ParseDateTime(%q).String() = %q, want 20 characters ending in +0000", s, out)
		}
		again, err := api.ParseDateTime(out)
		if err != nil {
			t.Fatalf("ParseDateTime(%q) accepted, but its output %q is refused: %v", s, out, err)
		}
		if !again.Equal(d.Time) {
			t.Fatalf("ParseDateTime(%q) = %v, but its output %q reads back as %v", s, d.Time, out, again.Time)
		}
		if d.Nanosecond() != 0 {
			t.Fatalf("ParseDateTime(%q) kept a fraction of a second: %v", s, d.Time)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON api.DateTime
		if err := json.Unmarshal(b, &fromJSON); err != nil || !fromJSON.Equal(d.Time) {
			t.Fatalf("JSON %s reads back as %v, %v", b, fromJSON.Time, err)
		}
	})
}
