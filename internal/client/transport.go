package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// NewTransport returns the transport every request of the CLI goes through: proxies from
// HTTPS_PROXY/HTTP_PROXY/NO_PROXY, a User-Agent, and, when debug is not nil, a log of each
// exchange with every secret redacted.
func NewTransport(version string, debug io.Writer) http.RoundTripper {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyFromEnvironment
	base.ResponseHeaderTimeout = 60 * time.Second
	var rt http.RoundTripper = base
	if debug != nil {
		rt = &debugTransport{next: rt, w: debug}
	}
	return &userAgent{next: rt, ua: "vcs/" + version}
}

type userAgent struct {
	next http.RoundTripper
	ua   string
}

func (t *userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", t.ua)
	}
	return t.next.RoundTrip(r)
}

// secretNames are headers, form fields, query parameters and JSON members whose values the
// debug log never shows.
var secretNames = []string{
	"authorization", "proxy-authorization", "cookie", "set-cookie",
	"password", "client_secret", "access_token", "refresh_token", "id_token", "token",
	"code", "code_verifier", "signingsecret", "csrf",
}

func isSecret(name string) bool { return slices.Contains(secretNames, strings.ToLower(name)) }

const redacted = "[REDACTED]"

// debugTransport logs requests and responses to w.
type debugTransport struct {
	next http.RoundTripper
	w    io.Writer
	mu   sync.Mutex // one exchange's lines stay together
}

// maxLogged bounds the part of a body the log shows.
const maxLogged = 64 << 10

func (t *debugTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil && r.GetBody != nil {
		if rc, err := r.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(io.LimitReader(rc, maxLogged))
			rc.Close()
		}
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)

	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", r.Method, redactURL(r.URL))
	writeHeaders(&b, "> ", r.Header)
	writeBody(&b, r.Header.Get("Content-Type"), reqBody)
	if err != nil {
		fmt.Fprintf(&b, "! %v (%s)\n", err, time.Since(start).Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "< %s %s (%s)\n", resp.Proto, resp.Status, time.Since(start).Round(time.Millisecond))
		writeHeaders(&b, "< ", resp.Header)
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr != nil {
			return nil, rerr
		}
		writeBody(&b, resp.Header.Get("Content-Type"), body)
	}
	b.WriteString("\n")
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = io.WriteString(t.w, b.String())
	return resp, err
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	q := c.Query()
	for k := range q {
		if isSecret(k) {
			q[k] = []string{redacted}
		}
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// redactLink redacts the secret query parameters and the user information of s when it is
// an absolute URL (a Location header, a paging link that echoes the request's query);
// anything else is returned as it is.
func redactLink(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	if u.User != nil {
		return redactURL(u)
	}
	for k := range u.Query() {
		if isSecret(k) {
			return redactURL(u)
		}
	}
	return s
}

func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			if isSecret(k) {
				v = redacted
			} else {
				v = redactLink(v)
			}
			fmt.Fprintf(b, "%s%s: %s\n", prefix, k, v)
		}
	}
}

func writeBody(b *strings.Builder, contentType string, body []byte) {
	if len(body) == 0 {
		return
	}
	b.WriteString(RedactBody(contentType, body))
	b.WriteString("\n")
}

// RedactBody returns body with the values of secret members replaced, for JSON and form
// bodies; any other body is summarised by its size, since it could hold anything.
func RedactBody(contentType string, body []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return fmt.Sprintf("[%d bytes of malformed form]", len(body))
		}
		for k := range q {
			if isSecret(k) {
				q[k] = []string{redacted}
			}
		}
		return q.Encode()
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Sprintf("[%d bytes of malformed JSON]", len(body))
		}
		out, err := json.Marshal(redactJSON(v))
		if err != nil {
			return fmt.Sprintf("[%d bytes of JSON]", len(body))
		}
		return string(out)
	}
	return fmt.Sprintf("[%d bytes of %s]", len(body), mt)
}

func redactJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch headers, ok := e.(map[string]any); {
			case isSecret(k):
				x[k] = redacted
			case ok && strings.EqualFold(k, "postHeaders"):
				// A subscription's headers are the receiver's credentials, whatever their names.
				for h := range headers {
					headers[h] = redacted
				}
			default:
				x[k] = redactJSON(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = redactJSON(e)
		}
	case string:
		return redactLink(x)
	}
	return v
}
