package api

import (
	"fmt"
	"net/http"
	"strings"
)

// Error codes: stable upper-case words that callers may switch on.
const (
	CodeInvalid      = "INVALID"
	CodeRequired     = "REQUIRED"
	CodeUnique       = "UNIQUE"
	CodeNotFound     = "NOTFOUND"
	CodeUnauthorized = "UNAUTHORIZED"
	CodeForbidden    = "FORBIDDEN"
	CodeExpired      = "EXPIRED"
	CodeConflict     = "CONFLICT"
	CodeRateLimited  = "RATELIMITED"
	CodeInternal     = "INTERNAL"
	// CodeUnsupported is a wrong content type or method; not one of the seed's words, but
	// stable like them.
	CodeUnsupported = "UNSUPPORTED"
)

// ErrorBody is the body of every failed data API response.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// Error is a failure the caller can act on. The service returns it from its operations and
// the HTTP layer writes it as the body; the client decodes the same body back into it.
type Error struct {
	HTTPStatus  int          `json:"httpStatus"`
	Code        string       `json:"errorCode"`
	Detail      string       `json:"detail"`
	FieldErrors []FieldError `json:"fieldErrors,omitempty"`
}

// FieldError names one member of a request that was at fault.
type FieldError struct {
	FieldName    string `json:"fieldName"`
	Code         string `json:"errorCode"`
	ErrorDisplay string `json:"errorDisplay"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Detail)
	if b.Len() == 0 {
		b.WriteString(strings.ToLower(e.Code))
	}
	for i, f := range e.FieldErrors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.ErrorDisplay)
	}
	return b.String()
}

// Status is the HTTP status of e: HTTPStatus when set, else the one its code implies.
func (e *Error) Status() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	switch e.Code {
	case CodeInvalid, CodeRequired:
		return http.StatusBadRequest
	case CodeUnauthorized, CodeExpired:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeUnique, CodeConflict:
		return http.StatusConflict
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnsupported:
		return http.StatusUnsupportedMediaType
	default:
		return http.StatusInternalServerError
	}
}

// Errorf returns an Error with code and a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// NotFound is the error for a resource that does not exist or that the caller may not see;
// the two are indistinguishable on purpose.
func NotFound(kind string) *Error {
	return Errorf(CodeNotFound, "%s not found", kind)
}

// FieldErrors collects the faults of one request body, so that a caller learns of all of
// them at once.
type FieldErrors []FieldError

// Add records a fault of field.
func (fe *FieldErrors) Add(field, code, format string, args ...any) {
	*fe = append(*fe, FieldError{FieldName: field, Code: code, ErrorDisplay: fmt.Sprintf(format, args...)})
}

// Err returns an INVALID error with detail and the collected faults, or nil when there are none.
func (fe FieldErrors) Err(detail string) error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalid, Detail: detail, FieldErrors: fe}
}

// OAuthError is a token endpoint failure (RFC 6749 §5.2).
type OAuthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *OAuthError) Error() string {
	if e.Description == "" {
		return e.Code
	}
	return e.Code + ": " + e.Description
}
