package api_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
)

type optPatch struct {
	Label   api.Optional[string] `json:"label,omitzero"`
	Mileage api.Optional[int64]  `json:"mileage,omitzero"`
	Auto    api.Optional[bool]   `json:"auto,omitzero"`
}

func TestOptionalUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		body               string
		set, null, present bool
		value              string
	}{
		{`{}`, false, false, false, ""},
		{`{"label":null}`, true, true, false, ""},
		{`{"label": null }`, true, true, false, ""},
		{`{"label":""}`, true, false, true, ""},
		{`{"label":"null"}`, true, false, true, "null"}, // the string, not the literal
		{`{"label":"x"}`, true, false, true, "x"},
	} {
		var p optPatch
		if err := json.Unmarshal([]byte(tc.body), &p); err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		o := p.Label
		if o.Set != tc.set || o.Null != tc.null || o.Present() != tc.present || o.Value != tc.value {
			t.Errorf("%s: got %+v (present %v), want set=%v null=%v present=%v value=%q",
				tc.body, o, o.Present(), tc.set, tc.null, tc.present, tc.value)
		}
		if o.IsZero() == tc.set {
			t.Errorf("%s: IsZero() = %v, want %v", tc.body, o.IsZero(), !tc.set)
		}
		if ptr := o.Ptr(); (ptr != nil) != tc.present || (ptr != nil && *ptr != tc.value) {
			t.Errorf("%s: Ptr() = %v", tc.body, ptr)
		}
		// Members not in the body stay absent.
		if p.Mileage.Set || p.Auto.Set {
			t.Errorf("%s: other members set: %+v", tc.body, p)
		}
	}
}

func TestOptionalNullClearsPreviousValue(t *testing.T) {
	// A decoder reusing a struct must not leave the old value behind a null.
	p := optPatch{Label: api.Some("old"), Mileage: api.Some[int64](7)}
	if err := json.Unmarshal([]byte(`{"label":null,"mileage":9}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Label != api.Null[string]() {
		t.Errorf("label = %+v, want Null", p.Label)
	}
	if p.Mileage != api.Some[int64](9) {
		t.Errorf("mileage = %+v, want Some(9)", p.Mileage)
	}
}

func TestOptionalTypeError(t *testing.T) {
	for _, body := range []string{`{"mileage":"5"}`, `{"mileage":1.5}`, `{"auto":1}`, `{"label":{}}`} {
		var p optPatch
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(body), &p); !errors.As(err, &te) {
			t.Errorf("%s: error %v (%T), want *json.UnmarshalTypeError", body, err, err)
		}
	}
}

func TestOptionalMarshal(t *testing.T) {
	for _, tc := range []struct {
		in   optPatch
		want string
	}{
		{optPatch{}, `{}`},
		{optPatch{Label: api.Null[string]()}, `{"label":null}`},
		{optPatch{Label: api.Some("")}, `{"label":""}`},
		{optPatch{Label: api.Some("x"), Mileage: api.Some[int64](0), Auto: api.Some(false)}, `{"label":"x","mileage":0,"auto":false}`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("marshal %+v = %s, want %s", tc.in, b, tc.want)
		}
		var back optPatch
		if err := json.Unmarshal(b, &back); err != nil || back != tc.in {
			t.Errorf("%s reads back as %+v, %v", b, back, err)
		}
	}
}

func TestOptionalPtrIsACopy(t *testing.T) {
	o := api.Some("a")
	*o.Ptr() = "b"
	if o.Value != "a" {
		t.Errorf("writing through Ptr changed the Optional: %q", o.Value)
	}
	if api.Null[string]().Ptr() != nil || (api.Optional[string]{}).Ptr() != nil {
		t.Error("Ptr of null or absent is not nil")
	}
	// Null wins over a stale value: Present must not report it.
	if (api.Optional[string]{Value: "x", Set: true, Null: true}).Present() {
		t.Error("a null member with a leftover value is Present")
	}
}

func TestOptionalObjectIsStrict(t *testing.T) {
	type point struct {
		Latitude float64 `json:"latitude"`
	}
	var in struct {
		P api.Optional[point] `json:"p"`
	}
	if err := json.Unmarshal([]byte(`{"p":{"latitude":1,"bogus":2}}`), &in); err == nil {
		t.Fatal("an unknown member inside an optional object was accepted")
	}
	if err := json.Unmarshal([]byte(`{"p":{"latitude":1.5}}`), &in); err != nil || in.P.Value.Latitude != 1.5 {
		t.Fatalf("valid object: %v %+v", err, in.P)
	}
}
