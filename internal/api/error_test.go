package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
)

func TestErrorStatus(t *testing.T) {
	for code, want := range map[string]int{
		api.CodeInvalid:      http.StatusBadRequest,
		api.CodeRequired:     http.StatusBadRequest,
		api.CodeUnique:       http.StatusConflict,
		api.CodeNotFound:     http.StatusNotFound,
		api.CodeUnauthorized: http.StatusUnauthorized,
		api.CodeForbidden:    http.StatusForbidden,
		api.CodeExpired:      http.StatusUnauthorized,
		api.CodeConflict:     http.StatusConflict,
		api.CodeRateLimited:  http.StatusTooManyRequests,
		api.CodeInternal:     http.StatusInternalServerError,
		api.CodeUnsupported:  http.StatusUnsupportedMediaType,
		"":                   http.StatusInternalServerError, // an unknown code is the server's fault
		"invalid":            http.StatusInternalServerError, // codes are case-sensitive words
	} {
		if got := (&api.Error{Code: code}).Status(); got != want {
			t.Errorf("Status() of %q = %d, want %d", code, got, want)
		}
	}
	// An explicit status wins over the code's.
	e := &api.Error{HTTPStatus: http.StatusRequestEntityTooLarge, Code: api.CodeInvalid}
	if got := e.Status(); got != http.StatusRequestEntityTooLarge {
		t.Errorf("Status() with HTTPStatus 413 = %d", got)
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *api.Error
		want string
	}{
		{&api.Error{Code: api.CodeNotFound, Detail: "vehicle not found"}, "vehicle not found"},
		{&api.Error{Code: api.CodeForbidden}, "forbidden"},
		{&api.Error{Code: api.CodeInvalid, Detail: "vehicle could not be created", FieldErrors: []api.FieldError{
			{FieldName: "vin", Code: api.CodeInvalid, ErrorDisplay: "vin must be 17 characters"},
		}}, "vehicle could not be created: vin must be 17 characters"},
		{&api.Error{Code: api.CodeInvalid, FieldErrors: []api.FieldError{
			{FieldName: "a", Code: api.CodeRequired, ErrorDisplay: "a is required"},
			{FieldName: "b", Code: api.CodeInvalid, ErrorDisplay: "b must be a string"},
		}}, "invalid: a is required; b must be a string"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestFieldErrors(t *testing.T) {
	var fe api.FieldErrors
	// nil, not a typed nil *Error: callers write `if err := fe.Err(...); err != nil`.
	if err := fe.Err("nothing wrong"); err != nil {
		t.Fatalf("Err of no faults = %#v, want nil", err)
	}
	fe.Add("vin", api.CodeInvalid, "vin must be %d characters", 17)
	fe.Add("username", api.CodeRequired, "username is required")
	err := fe.Err("vehicle could not be created")
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("Err = %#v, want *api.Error", err)
	}
	want := []api.FieldError{
		{FieldName: "vin", Code: api.CodeInvalid, ErrorDisplay: "vin must be 17 characters"},
		{FieldName: "username", Code: api.CodeRequired, ErrorDisplay: "username is required"},
	}
	if e.Code != api.CodeInvalid || e.Status() != http.StatusBadRequest || e.Detail != "vehicle could not be created" {
		t.Errorf("Err = %+v", e)
	}
	if len(e.FieldErrors) != len(want) || e.FieldErrors[0] != want[0] || e.FieldErrors[1] != want[1] {
		t.Errorf("field errors = %+v, want %+v", e.FieldErrors, want)
	}
}

func TestErrorBodyJSON(t *testing.T) {
	body := api.ErrorBody{Error: &api.Error{HTTPStatus: 400, Code: api.CodeInvalid, Detail: "vehicle could not be created",
		FieldErrors: []api.FieldError{{FieldName: "vin", Code: api.CodeInvalid, ErrorDisplay: "vin must be 17 characters"}}}}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"error":{"httpStatus":400,"errorCode":"INVALID","detail":"vehicle could not be created","fieldErrors":[{"fieldName":"vin","errorCode":"INVALID","errorDisplay":"vin must be 17 characters"}]}}`
	if string(b) != want {
		t.Errorf("error body:\n got %s\nwant %s", b, want)
	}
	// Without field errors the member is left out rather than null.
	b, _ = json.Marshal(api.ErrorBody{Error: api.NotFound("vehicle")})
	if string(b) != `{"error":{"httpStatus":0,"errorCode":"NOTFOUND","detail":"vehicle not found"}}` {
		t.Errorf("not found body = %s", b)
	}
	if got := api.NotFound("vehicle").Status(); got != http.StatusNotFound {
		t.Errorf("NotFound status = %d", got)
	}
}

func TestOAuthErrorText(t *testing.T) {
	if got := (&api.OAuthError{Code: api.OAuthInvalidGrant}).Error(); got != "invalid_grant" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&api.OAuthError{Code: api.OAuthInvalidGrant, Description: "code expired"}).Error(); got != "invalid_grant: code expired" {
		t.Errorf("Error() = %q", got)
	}
}
