package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/events"
	"github.com/connected-vehicle/vcs/internal/store"
)

// maxRedirects bounds the redirects one attempt follows.
const maxRedirects = 3

// Attempt makes one delivery attempt of d now and decides what follows: delivered, a
// retry at a stored time, or given up. Redirects are followed within the attempt: 301 and
// 308 move the subscription for good, 302 and 307 only this once.
func (e *Engine) Attempt(ctx context.Context, d *store.Delivery) *store.Outcome {
	// An attempt under way finishes even while the engine stops: cutting it short would
	// count a failure the receiver never caused.
	ctx = context.WithoutCancel(ctx)
	start := e.now()
	attempt := d.Attempts + 1
	out := &store.Outcome{NotificationID: d.ID, SubscriptionID: d.SubscriptionID}

	target := d.PostURL
	var status int
	var resp *http.Response
	var err error
	var redirectErr string
	for hop := 0; ; hop++ {
		status, resp, err = e.post(ctx, target, d)
		if err != nil || !isRedirect(status) {
			break
		}
		if hop == maxRedirects {
			redirectErr = fmt.Sprintf("more than %d redirects", maxRedirects)
			break
		}
		next, lerr := resolve(target, resp.Header.Get("Location"))
		if lerr != nil {
			redirectErr = lerr.Error()
			break
		}
		if e.cfg.PublicOnly && !strings.HasPrefix(next, "https://") {
			// Production delivers over https only; a redirect does not change that.
			redirectErr = "a redirect to a URL that is not https"
			break
		}
		if status == http.StatusMovedPermanently || status == http.StatusPermanentRedirect {
			out.MoveSubscription = &next
		}
		target = next
	}

	out.Attempt = store.DeliveryAttempt{NotificationID: d.ID, Attempt: attempt, At: start, URL: target,
		HTTPStatus: status, Duration: e.now().Sub(start)}
	retry := false
	var retryWait time.Duration
	switch {
	case err != nil:
		msg := describe(err)
		out.Attempt.Error = &msg
		retry = true
	case status >= 200 && status <= 299:
		out.Status = api.StatusDelivered
		return out
	case status == http.StatusGone:
		msg := "the receiver answered 410 Gone: the subscription is deleted"
		out.Attempt.Error, out.DeleteSubscription = &msg, true
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		msg := fmt.Sprintf("the receiver answered %d %s", status, http.StatusText(status))
		out.Attempt.Error = &msg
		retry, retryWait = true, retryAfter(resp.Header.Get("Retry-After"), e.now())
	default:
		msg := fmt.Sprintf("the receiver answered %d %s; not retried", status, http.StatusText(status))
		if redirectErr != "" {
			msg = fmt.Sprintf("the receiver answered %d: %s; not retried", status, redirectErr)
		}
		out.Attempt.Error = &msg
	}
	if retry && attempt < e.cfg.Policy.MaxAttempts() {
		wait := max(e.cfg.Policy.delay(attempt), min(retryWait, e.cfg.Policy.MaxRetryAfter))
		next := e.now().Add(wait)
		out.Status, out.NextAttemptAt = api.StatusPending, &next
		return out
	}
	out.Status = api.StatusFailed
	return out
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// resolve returns the absolute http(s) URL that loc names relative to base.
func resolve(base, loc string) (string, error) {
	if loc == "" {
		return "", errors.New("no Location")
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u, err := b.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("unusable Location %q", loc)
	}
	return u.String(), nil
}

// post sends the notification to target once, signed, and returns the status.
func (e *Engine) post(ctx context.Context, target string, d *store.Delivery) (int, *http.Response, error) {
	payload := d.Payload()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	for k, v := range d.PostHeaders {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	req.Header.Set("User-Agent", e.cfg.UserAgent)
	id := strconv.FormatInt(d.ID, 10)
	now := e.now()
	wh, err := standardwebhooks.NewWebhook(d.SigningSecret)
	if err != nil {
		return 0, nil, fmt.Errorf("signing secret: %w", err)
	}
	sig, err := wh.Sign(id, now, payload)
	if err != nil {
		return 0, nil, fmt.Errorf("sign: %w", err)
	}
	req.Header.Set(standardwebhooks.HeaderWebhookID, id)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)

	resp, err := e.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	// Read a little of the body so that the connection can be reused; ignore the rest.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, resp, nil
}

// describe says why an attempt failed without a status, briefly, and without details of
// the service's own network (such as its resolver's address).
func describe(err error) string {
	var blocked *blockedError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &blocked):
		return blocked.Error()
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "no such host: " + dns.Name
		}
		return "could not resolve " + dns.Name
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// blockedError is a connection the production guard refused.
type blockedError struct{ addr string }

func (e *blockedError) Error() string {
	return "refused to connect to " + e.addr + ": not a public address"
}

// newTransport returns the engine's HTTP transport: keep-alive connections per host,
// bounded per host so that one receiver cannot take every connection, no proxy, and, when
// publicOnly, a check of every address it connects to — after name resolution and on every
// redirect, so that neither a DNS answer nor a Location can point it inside the network.
func newTransport(publicOnly bool, timeout time.Duration) *http.Transport {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if publicOnly {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !events.PublicAddr(ip) {
				return &blockedError{addr: host}
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   64,
		MaxConnsPerHost:       64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
}
