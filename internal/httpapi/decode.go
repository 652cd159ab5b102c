package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/connected-vehicle/vcs/internal/api"
)

// decodeBody reads a JSON object request body into v, a pointer to a struct of api input
// members. It reports every fault at once, each under the member's name: an unknown member
// (including the ones only the service sets, such as vehicleId), a value of the wrong type.
// Member names match exactly, unlike encoding/json's case-insensitive default.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &api.Error{HTTPStatus: http.StatusUnsupportedMediaType, Code: api.CodeUnsupported,
				Detail: "the request body must be JSON (Content-Type: application/json)"}
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBodySize))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &api.Error{HTTPStatus: http.StatusRequestEntityTooLarge, Code: api.CodeInvalid,
				Detail: fmt.Sprintf("the request body is larger than %d bytes", api.MaxBodySize)}
		}
		return fmt.Errorf("read request body: %w", err)
	}
	return decodeJSONObject(body, v)
}

// decodeJSONObject is decodeBody once the body is read.
func decodeJSONObject(body []byte, v any) error {
	invalid := func(detail string) error { return &api.Error{Code: api.CodeInvalid, Detail: detail} }
	if len(strings.TrimSpace(string(body))) == 0 {
		return invalid("the request body is empty; send a JSON object")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax):
			return invalid(fmt.Sprintf("the request body is not valid JSON: %v (at byte %d)", syntax, syntax.Offset))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return invalid("the request body is not valid JSON: it ends too early")
		default:
			return invalid("the request body must be a JSON object")
		}
	}
	if members == nil {
		return invalid("the request body must be a JSON object, not null")
	}

	rv := reflect.ValueOf(v).Elem()
	fields := jsonFields(rv.Type())
	var fe api.FieldErrors
	for _, name := range sortedKeys(members) {
		idx, ok := fields[name]
		if !ok {
			fe.Add(name, api.CodeInvalid, "%s is not a member that can be sent", name)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(members[name]))
		dec.DisallowUnknownFields() // in nested objects too
		if err := dec.Decode(rv.Field(idx).Addr().Interface()); err != nil {
			if unknown, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				fe.Add(name, api.CodeInvalid, "%s has an unknown member %s", name, unknown)
			} else {
				fe.Add(name, api.CodeInvalid, "%s must be %s", name, describe(err))
			}
		}
	}
	return fe.Err("the request body has invalid members")
}

// jsonFields maps the JSON member names of struct type t to field indexes.
func jsonFields(t reflect.Type) map[string]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = i
	}
	fieldCache.Store(t, m)
	return m
}

var fieldCache sync.Map // reflect.Type → map[string]int; types are fixed, so it only grows to their count

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Sorted, so that the same body always reports its faults in the same order.
	slices.Sort(keys)
	return keys
}

// describe says what a member should have been, from a decoding error.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return "a valid value"
	}
	if te.Type == reflect.TypeFor[api.DateTime]() {
		return "a date-time like 20261122T023433+0000"
	}
	switch te.Type.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a valid value"
}
