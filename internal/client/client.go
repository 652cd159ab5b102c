// Package client is the CLI's core: typed calls to the connected-vehicle service over an
// *http.Client that already carries authentication, with the service's errors decoded into
// *api.Error and paging followed through the service's next links.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Client calls one service.
type Client struct {
	baseURL string
	http    *http.Client
}

// New returns a client of the service at baseURL; hc authenticates the requests.
func New(baseURL string, hc *http.Client) *Client {
	return &Client{baseURL: strings.TrimSuffix(baseURL, "/"), http: hc}
}

// BaseURL is the service's base URL.
func (c *Client) BaseURL() string { return c.baseURL }

// maxResponse bounds what the client reads of a response.
const maxResponse = 32 << 20

// do sends a request to path (relative to the base URL, or an absolute URL on the same
// origin) with in as the JSON body when not nil, and decodes a 2xx body into out when not
// nil.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	target := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		target = c.baseURL + path
	} else if err := c.sameOrigin(path); err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.networkError(method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the service answered with an unexpected body: %w", method, path, err)
	}
	return nil
}

// sameOrigin refuses links to another host: the client's token must not follow them.
func (c *Client) sameOrigin(link string) error {
	u, err1 := url.Parse(link)
	b, err2 := url.Parse(c.baseURL)
	if err1 != nil || err2 != nil || u.Scheme != b.Scheme || u.Host != b.Host {
		return fmt.Errorf("the service sent a link to another address (%s); not following it", link)
	}
	return nil
}

// decodeError turns a failed response into an *api.Error, whatever its body.
func decodeError(status int, raw []byte) error {
	var body api.ErrorBody
	if err := json.Unmarshal(raw, &body); err == nil && body.Error != nil {
		if body.Error.HTTPStatus == 0 {
			body.Error.HTTPStatus = status
		}
		return body.Error
	}
	return &api.Error{HTTPStatus: status, Code: codeFor(status), Detail: fmt.Sprintf("the service answered %d %s", status, http.StatusText(status))}
}

func codeFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return api.CodeUnauthorized
	case http.StatusForbidden:
		return api.CodeForbidden
	case http.StatusNotFound:
		return api.CodeNotFound
	case http.StatusTooManyRequests:
		return api.CodeRateLimited
	}
	if status >= 500 {
		return api.CodeInternal
	}
	return api.CodeInvalid
}

// networkError says what could not be reached, with a hint for the common case.
func (c *Client) networkError(method, path string, err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return fmt.Errorf("cannot reach the service at %s (is it running? `vcs server --dev` starts one): %w", c.baseURL, err)
	}
	return fmt.Errorf("%s %s: %w", method, path, err)
}
