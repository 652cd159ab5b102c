package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/connected-vehicle/vcs/internal/api"
)

// fieldFault is one expected field error: the member and the words shown for it.
type fieldFault struct{ field, display string }

// decodeInto runs decodeJSONObject for a new T and returns it with the error.
func decodeInto[T any](body string) (*T, error) {
	v := new(T)
	return v, decodeJSONObject([]byte(body), v)
}

// checkFaults asserts that err is a 400 INVALID *api.Error listing exactly want, in order.
func checkFaults(t *testing.T, err error, want []fieldFault) {
	t.Helper()
	e, ok := err.(*api.Error)
	if !ok {
		t.Fatalf("error %v (%T), want *api.Error", err, err)
	}
	if e.Status() != http.StatusBadRequest || e.Code != api.CodeInvalid || e.Detail == "" {
		t.Errorf("error %+v, want 400 INVALID with a detail", e)
	}
	var got []fieldFault
	for _, f := range e.FieldErrors {
		got = append(got, fieldFault{f.FieldName, f.ErrorDisplay})
		if f.Code != api.CodeInvalid {
			t.Errorf("field error %+v: code %q, want INVALID", f, f.Code)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("field errors\n got %q\nwant %q", got, want)
	}
}

func TestDecodeAccountInput(t *testing.T) {
	body := `{"firstName":"Ada","lastName":"Lovelace","zipcode":"33602","email":null,"phone":"+1 555 0100",
		"timeZone":"America/New_York","preferredContact":"EMAIL","username":"ada","password":"correct horse"}`
	in, err := decodeInto[api.AccountInput](body)
	if err != nil {
		t.Fatal(err)
	}
	want := api.AccountInput{
		FirstName: api.Some("Ada"), LastName: api.Some("Lovelace"), Zipcode: api.Some("33602"),
		Email: api.Null[string](), Phone: api.Some("+1 555 0100"), TimeZone: api.Some("America/New_York"),
		PreferredContact: api.Some("EMAIL"), Username: api.Some("ada"), Password: api.Some("correct horse"),
	}
	if *in != want {
		t.Errorf("decoded\n %+v\nwant %+v", *in, want)
	}

	// An empty object is a valid (empty) partial update: everything stays absent.
	in, err = decodeInto[api.AccountInput](" { } ")
	if err != nil || *in != (api.AccountInput{}) {
		t.Errorf("{}: %+v, %v", *in, err)
	}
}

func TestDecodeVehicleInput(t *testing.T) {
	in, err := decodeInto[api.VehicleInput](`{"deviceId":"C201200001","vin":null,"label":"","autoAssignDevice":true,"mileage":-9223372036854775808}`)
	if err != nil {
		t.Fatal(err)
	}
	want := api.VehicleInput{DeviceID: api.Some("C201200001"), VIN: api.Null[string](), Label: api.Some(""),
		AutoAssignDevice: api.Some(true), Mileage: api.Some[int64](-1 << 63)}
	if *in != want {
		t.Errorf("decoded\n %+v\nwant %+v", *in, want)
	}
}

func TestDecodeFieldFaults(t *testing.T) {
	type target int
	const (
		account target = iota
		vehicle
	)
	for _, tc := range []struct {
		name   string
		target target
		body   string
		want   []fieldFault
	}{
		// Members the service sets, or that do not exist, are refused by name.
		{"vehicleId", vehicle, `{"vehicleId":1}`, []fieldFault{{"vehicleId", "vehicleId is not a member that can be sent"}}},
		{"name", vehicle, `{"name":"my car"}`, []fieldFault{{"name", "name is not a member that can be sent"}}},
		{"running", vehicle, `{"running":false}`, []fieldFault{{"running", "running is not a member that can be sent"}}},
		{"lastWaypoint", vehicle, `{"lastWaypoint":null}`, []fieldFault{{"lastWaypoint", "lastWaypoint is not a member that can be sent"}}},
		{"id", account, `{"id":5}`, []fieldFault{{"id", "id is not a member that can be sent"}}},
		{"dateCreated", account, `{"dateCreated":"20261122T023433+0000"}`, []fieldFault{{"dateCreated", "dateCreated is not a member that can be sent"}}},
		{"accessToken", account, `{"accessToken":{"code":"x"}}`, []fieldFault{{"accessToken", "accessToken is not a member that can be sent"}}},
		{"empty name", account, `{"":"x"}`, []fieldFault{{"", " is not a member that can be sent"}}},
		// Names match exactly: encoding/json alone would take these case-insensitively.
		{"VIN", vehicle, `{"VIN":"1FTFW1ET5DFC10312"}`, []fieldFault{{"VIN", "VIN is not a member that can be sent"}}},
		{"Label", vehicle, `{"Label":"x"}`, []fieldFault{{"Label", "Label is not a member that can be sent"}}},
		{"DeviceID", vehicle, `{"DeviceID":"x"}`, []fieldFault{{"DeviceID", "DeviceID is not a member that can be sent"}}},
		{"username", account, `{"userName":"x"}`, []fieldFault{{"userName", "userName is not a member that can be sent"}}},
		{"Go field name", account, `{"FirstName":"x"}`, []fieldFault{{"FirstName", "FirstName is not a member that can be sent"}}},

		// Wrong types, one per kind of member.
		{"string as number", account, `{"firstName":5}`, []fieldFault{{"firstName", "firstName must be a string"}}},
		{"string as bool", account, `{"zipcode":true}`, []fieldFault{{"zipcode", "zipcode must be a string"}}},
		{"string as object", vehicle, `{"label":{"text":"x"}}`, []fieldFault{{"label", "label must be a string"}}},
		{"string as array", vehicle, `{"vin":["1FTFW1ET5DFC10312"]}`, []fieldFault{{"vin", "vin must be a string"}}},
		{"bool as string", vehicle, `{"autoAssignDevice":"yes"}`, []fieldFault{{"autoAssignDevice", "autoAssignDevice must be true or false"}}},
		{"bool as number", vehicle, `{"autoAssignDevice":1}`, []fieldFault{{"autoAssignDevice", "autoAssignDevice must be true or false"}}},
		{"integer as string", vehicle, `{"mileage":"12"}`, []fieldFault{{"mileage", "mileage must be an integer in range"}}},
		{"integer as fraction", vehicle, `{"mileage":1.5}`, []fieldFault{{"mileage", "mileage must be an integer in range"}}},
		{"integer as exponent", vehicle, `{"mileage":1e3}`, []fieldFault{{"mileage", "mileage must be an integer in range"}}},
		{"integer too large", vehicle, `{"mileage":9223372036854775808}`, []fieldFault{{"mileage", "mileage must be an integer in range"}}},
		{"integer as object", vehicle, `{"mileage":{}}`, []fieldFault{{"mileage", "mileage must be an integer in range"}}},
		// An object where a scalar belongs, with members of its own: still one fault, on the member.
		{"nested unknown members", vehicle, `{"deviceId":{"serial":"x","vehicleId":3}}`, []fieldFault{{"deviceId", "deviceId must be a string"}}},

		// Every fieldFault at once, sorted by member name (upper case first, as bytes sort).
		{"many account faults", account, `{"zipcode":33602,"VIN":"x","password":["p"],"firstName":true,"id":3,"email":"a@b.c"}`, []fieldFault{
			{"VIN", "VIN is not a member that can be sent"},
			{"firstName", "firstName must be a string"},
			{"id", "id is not a member that can be sent"},
			{"password", "password must be a string"},
			{"zipcode", "zipcode must be a string"},
		}},
		{"many vehicle faults", vehicle, `{"vehicleId":1,"mileage":"far","label":7,"autoAssignDevice":"yes","vin":"ok"}`, []fieldFault{
			{"autoAssignDevice", "autoAssignDevice must be true or false"},
			{"label", "label must be a string"},
			{"mileage", "mileage must be an integer in range"},
			{"vehicleId", "vehicleId is not a member that can be sent"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.target == account {
				_, err = decodeInto[api.AccountInput](tc.body)
			} else {
				_, err = decodeInto[api.VehicleInput](tc.body)
			}
			checkFaults(t, err, tc.want)
		})
	}
}

func TestDecodeFaultOrderIsStable(t *testing.T) {
	// Go randomizes map order; the same body must list its faults the same way every time.
	body := `{"z":1,"y":2,"x":3,"w":4,"v":5,"u":6,"t":7,"s":8,"mileage":"a","label":1}`
	_, first := decodeInto[api.VehicleInput](body)
	for range 20 {
		_, again := decodeInto[api.VehicleInput](body)
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("faults changed order:\n%v\n%v", first, again)
		}
	}
}

func TestDecodeWholeBodyFaults(t *testing.T) {
	// Faults of the body as a whole: 400 with a detail, and no member to blame.
	for _, tc := range []struct{ name, body, detail string }{
		{"empty", ``, "empty"},
		{"whitespace", " \r\n\t ", "empty"},
		{"null", `null`, "not null"},
		{"array", `[]`, "must be a JSON object"},
		{"array of objects", `[{"label":"x"}]`, "must be a JSON object"},
		{"string", `"label"`, "must be a JSON object"},
		{"number", `5`, "must be a JSON object"},
		{"bool", `true`, "must be a JSON object"},
		{"trailing garbage", `{"label":"x"} x`, "not valid JSON"},
		{"two objects", `{} {}`, "not valid JSON"},
		{"trailing comma", `{"label":"x",}`, "not valid JSON"},
		{"single quotes", `{'label':'x'}`, "not valid JSON"},
		{"unquoted name", `{label:"x"}`, "not valid JSON"},
		{"truncated", `{"label":`, "not valid JSON"},
		{"truncated string", `{"label":"x`, "not valid JSON"},
		{"comment", `{"label":"x" /* hi */}`, "not valid JSON"},
		{"NaN", `{"mileage":NaN}`, "not valid JSON"},
		{"byte order mark", "\ufeff{}", "not valid JSON"},
		{"bad escape", `{"label":"\x"}`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeInto[api.VehicleInput](tc.body)
			checkFaults(t, err, nil)
			if err != nil && !strings.Contains(err.(*api.Error).Detail, tc.detail) {
				t.Errorf("detail %q, want it to mention %q", err.(*api.Error).Detail, tc.detail)
			}
		})
	}
}

// nestedInput has member kinds that today's inputs lack, to reach the rest of the decoder:
// a nested object (unknown members refused inside it too), a date-time, an array.
type nestedInput struct {
	Point  api.Waypoint `json:"point"`
	When   api.DateTime `json:"when"`
	Tags   []string     `json:"tags"`
	Hidden string       `json:"-"`
	secret string       // unexported: never a member
	Plain  string
}

func TestDecodeNestedMembers(t *testing.T) {
	in, err := decodeInto[nestedInput](`{"point":{"timestamp":"20261122T073433+0500","latitude":28.5,"longitude":-82.5},"when":"20261122T023433+0000","tags":["a"],"Plain":"p"}`)
	if err != nil {
		t.Fatal(err)
	}
	if in.Point.Latitude != 28.5 || in.Point.Timestamp.String() != "20261122T023433+0000" || in.When.String() != "20261122T023433+0000" ||
		!slices.Equal(in.Tags, []string{"a"}) || in.Plain != "p" {
		t.Errorf("decoded %+v", in)
	}

	for _, tc := range []struct {
		body string
		want []fieldFault
	}{
		{`{"point":{"latitude":1,"altitude":2}}`, []fieldFault{{"point", `point has an unknown member "altitude"`}}},
		{`{"point":{"latitude":"north"}}`, []fieldFault{{"point", "point must be a number"}}},
		{`{"point":{"timestamp":"yesterday"}}`, []fieldFault{{"point", "point must be a date-time like 20261122T023433+0000"}}},
		{`{"point":5}`, []fieldFault{{"point", "point must be an object"}}},
		{`{"when":"20261122T023433Z"}`, []fieldFault{{"when", "when must be a date-time like 20261122T023433+0000"}}},
		{`{"when":20261122}`, []fieldFault{{"when", "when must be a date-time like 20261122T023433+0000"}}},
		{`{"tags":"a"}`, []fieldFault{{"tags", "tags must be an array"}}},
		{`{"tags":[1]}`, []fieldFault{{"tags", "tags must be a string"}}},
		{`{"-":"x","Hidden":"x","secret":"x"}`, []fieldFault{
			{"-", "- is not a member that can be sent"},
			{"Hidden", "Hidden is not a member that can be sent"},
			{"secret", "secret is not a member that can be sent"},
		}},
	} {
		_, err := decodeInto[nestedInput](tc.body)
		t.Run(tc.body, func(t *testing.T) { checkFaults(t, err, tc.want) })
	}
}

// newJSONRequest is a POST with body and, unless empty, contentType.
func newJSONRequest(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/vehicle/", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

func TestDecodeBodyContentType(t *testing.T) {
	for _, tc := range []struct {
		contentType string
		ok          bool
	}{
		{"", true}, // curl -d without -H sends none; the body decides
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"application/json;charset=UTF-8", true},
		{"Application/JSON", true}, // media types are case-insensitive
		{"text/plain", false},
		{"text/plain; charset=utf-8", false},
		{"application/x-www-form-urlencoded", false},
		{"application/json-patch+json", false},
		{"application/jsonx", false},
		{"json", false},
		{"application/json; charset", false}, // malformed parameter
	} {
		var in api.VehicleInput
		err := decodeBody(httptest.NewRecorder(), newJSONRequest(`{"label":"x"}`, tc.contentType), &in)
		if tc.ok {
			if err != nil || in.Label != api.Some("x") {
				t.Errorf("Content-Type %q: %+v, %v", tc.contentType, in, err)
			}
			continue
		}
		e, isAPI := err.(*api.Error)
		if !isAPI || e.Status() != http.StatusUnsupportedMediaType || e.Code != api.CodeUnsupported {
			t.Errorf("Content-Type %q: error %v, want 415 UNSUPPORTED", tc.contentType, err)
		}
		if in.Label.Set {
			t.Errorf("Content-Type %q: the body was decoded anyway", tc.contentType)
		}
	}
}

func TestDecodeBodySizeLimit(t *testing.T) {
	// {"label":"xxx…"} of exactly MaxBodySize bytes is read whole; one byte more is 413.
	label := strings.Repeat("x", api.MaxBodySize-len(`{"label":""}`))
	exact := `{"label":"` + label + `"}`
	if len(exact) != api.MaxBodySize {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	var in api.VehicleInput
	if err := decodeBody(httptest.NewRecorder(), newJSONRequest(exact, "application/json"), &in); err != nil {
		t.Fatalf("body of exactly %d bytes: %v", api.MaxBodySize, err)
	}
	if in.Label.Value != label {
		t.Errorf("label of %d bytes decoded as %d bytes", len(label), len(in.Label.Value))
	}

	for _, body := range []string{
		`{"label":"` + label + `x"}`,
		// Over the limit and malformed too: size is reported, since the rest was never read.
		`{"label":` + strings.Repeat(" ", api.MaxBodySize),
	} {
		err := decodeBody(httptest.NewRecorder(), newJSONRequest(body, "application/json"), &in)
		e, ok := err.(*api.Error)
		if !ok || e.Status() != http.StatusRequestEntityTooLarge || e.HTTPStatus != http.StatusRequestEntityTooLarge {
			t.Errorf("body of %d bytes: %v, want 413", len(body), err)
		}
	}
}

func TestDecodeBodyReadError(t *testing.T) {
	// A connection that fails mid-body is not the client's JSON fieldFault: no 400 body for it.
	boom := errors.New("connection reset")
	r := httptest.NewRequest(http.MethodPost, "/vehicle/", iotest.ErrReader(boom))
	var in api.VehicleInput
	err := decodeBody(httptest.NewRecorder(), r, &in)
	var e *api.Error
	if !errors.Is(err, boom) || errors.As(err, &e) {
		t.Errorf("read error: %v (%T), want the read error itself", err, err)
	}
}

// fuzzDecode checks decodeJSONObject's contract for one body and input type T: it returns
// nil or a 400 *api.Error with sorted, complete field errors; and what it accepts, the
// client's own encoding of the result (json.Marshal of the input type) says again exactly.
func fuzzDecode[T any](t *testing.T, body []byte) {
	var v T
	err := decodeJSONObject(body, &v)
	if err != nil {
		e, ok := err.(*api.Error)
		if !ok {
			t.Fatalf("%q: error %v (%T), want *api.Error", body, err, err)
		}
		if e.Status() != http.StatusBadRequest || e.Code != api.CodeInvalid || e.Detail == "" {
			t.Fatalf("%q: error %+v, want 400 INVALID with a detail", body, e)
		}
		for i, f := range e.FieldErrors {
			if f.Code == "" || f.ErrorDisplay == "" {
				t.Fatalf("%q: field error %+v lacks a code or display", body, f)
			}
			if i > 0 && e.FieldErrors[i-1].FieldName >= f.FieldName {
				t.Fatalf("%q: field errors not sorted and distinct: %+v", body, e.FieldErrors)
			}
		}
		return
	}

	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%q: decoded %+v does not marshal: %v", body, v, err)
	}
	var again T
	if err := decodeJSONObject(out, &again); err != nil {
		t.Fatalf("%q decoded, but its re-encoding %s does not: %v", body, out, err)
	}
	if !reflect.DeepEqual(v, again) {
		t.Fatalf("%q: decoded %+v, but its re-encoding %s decodes as %+v", body, v, out, again)
	}

	// The re-encoding keeps exactly the members sent, and null where null was sent: absent,
	// null and a value are three different requests.
	var sent, kept map[string]json.RawMessage
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("%q decoded but is not an object: %v", body, err)
	}
	if err := json.Unmarshal(out, &kept); err != nil {
		t.Fatal(err)
	}
	if len(sent) != len(kept) {
		t.Fatalf("%q: members %d, re-encoded %s has %d", body, len(sent), out, len(kept))
	}
	for k, raw := range sent {
		isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if k2, ok := kept[k]; !ok || isNull != bytes.Equal(k2, []byte("null")) {
			t.Fatalf("%q: member %q became %s in %s", body, k, k2, out)
		}
	}
}

func FuzzDecodeAccountInput(f *testing.F) {
	for _, s := range []string{
		`{"firstName":"Ada","lastName":"Lovelace","zipcode":"33602","email":"ada@example.com","phone":null,"timeZone":"America/New_York","preferredContact":"EMAIL","username":"ada","password":"correct horse"}`,
		`{}`,
		`{"email":null,"phone":""}`,
		`{"firstName":"\u00c5da \ud83d\ude97","lastName":"<b>&amp;</b>"}`,
		`{"firstName":"\ud800"}`,
		"{\"firstName\":\"\xff\"}",
		`{"id":1,"dateCreated":"20261122T023433+0000","accessToken":{"code":"x"}}`,
		`{"FirstName":"x","USERNAME":"y"}`,
		`{"zipcode":33602,"password":["p"]}`,
		`{"username":"a","username":"b"}`,
		`{"username":"a","username":5}`,
		`null`, ``, `[]`, `{"a":`, `{} {}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { fuzzDecode[api.AccountInput](t, body) })
}

func FuzzDecodeVehicleInput(f *testing.F) {
	for _, s := range []string{
		`{"deviceId":"C201200001","vin":"1FTFW1ET5DFC10312","label":"work truck","autoAssignDevice":true,"mileage":123456}`,
		`{}`,
		`{"vin":null,"label":null,"mileage":null,"autoAssignDevice":null,"deviceId":null}`,
		`{"mileage":-0}`,
		`{"mileage":9223372036854775807}`,
		`{"mileage":9223372036854775808}`,
		`{"mileage":1.5,"autoAssignDevice":"yes","label":7}`,
		`{"mileage":1e3}`,
		`{"vehicleId":1,"VIN":"x","name":"n"}`,
		`{"label":{"x":{"y":[1,2,{"z":null}]}}}`,
		`{"label":"` + strings.Repeat(`\"`, 40) + `"}`,
		`null`, ``, ` `, `[{"vin":"x"}]`, `{"vin":"x"} x`, `{"vin":"x",}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { fuzzDecode[api.VehicleInput](t, body) })
}
