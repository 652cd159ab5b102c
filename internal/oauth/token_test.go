package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/store"
	"github.com/connected-vehicle/vcs/internal/store/sqlite"
)

// rfc7636Verifier is the code_verifier of RFC 7636 Appendix B.
const rfc7636Verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

func TestS256(t *testing.T) {
	// RFC 7636 Appendix B's challenge, as printed there (and as base64url(SHA-256(verifier))
	// gives it independently).
	if got, want := s256(rfc7636Verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; got != want {
		t.Errorf("s256(RFC 7636 Appendix B verifier) = %q, want %q", got, want)
	}
	// A challenge is itself 43 characters of the verifier alphabet, which is how the
	// authorize endpoint checks code_challenge.
	if c := s256("x"); !pkceVerifier.MatchString(c) {
		t.Errorf("challenge %q does not match the verifier syntax", c)
	}
}

func TestPKCEVerifierSyntax(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verifier string
		ok       bool
	}{
		{"42 characters", strings.Repeat("a", 42), false},
		{"43 characters", strings.Repeat("a", 43), true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"129 characters", strings.Repeat("a", 129), false},
		{"empty", "", false},
		{"every unreserved character", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", true},
		{"RFC 7636 Appendix B", rfc7636Verifier, true},
		{"plus", strings.Repeat("a", 42) + "+", false},
		{"slash", strings.Repeat("a", 42) + "/", false},
		{"padding", strings.Repeat("a", 42) + "=", false},
		{"space", strings.Repeat("a", 21) + " " + strings.Repeat("a", 21), false},
		{"percent-encoded", strings.Repeat("a", 40) + "%7E", false},
		{"trailing newline", strings.Repeat("a", 43) + "\n", false},
		{"leading newline", "\n" + strings.Repeat("a", 43), false},
		{"non-ASCII letter", strings.Repeat("a", 42) + "é", false},
	} {
		if got := pkceVerifier.MatchString(tc.verifier); got != tc.ok {
			t.Errorf("%s: pkceVerifier.MatchString(%q) = %v, want %v", tc.name, tc.verifier, got, tc.ok)
		}
	}
}

// tokenFuzzRedirect is the redirect URI the fuzzer's authorization codes are bound to.
const tokenFuzzRedirect = "http://127.0.0.1/cb"

// oauthErrorCodes are the error codes RFC 6749 §5.2 allows from the token endpoint.
var oauthErrorCodes = []string{"invalid_request", "invalid_client", "invalid_grant",
	"unauthorized_client", "unsupported_grant_type", "invalid_scope"}

// FuzzTokenEndpoint sends arbitrary form bodies to the token endpoint of a real server over
// a real store. Words in capitals in a body stand for real credentials, made fresh for that
// input, so that the fuzzer reaches past the lookups: CLIENT_ID and CLIENT_SECRET (the
// registered client), NEW_CODE (bound to tokenFuzzRedirect, PKCE challenge of
// rfc7636Verifier), ACCOUNT_CODE (an account-creation code: no redirect URI, no PKCE),
// SPENT_CODE, EXPIRED_CODE, FOREIGN_CODE (another client's), NEW_REFRESH, SPENT_REFRESH
// (already rotated), REVOKED_REFRESH, EXPIRED_REFRESH.
func FuzzTokenEndpoint(f *testing.F) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "f.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	s := New(db, Config{BaseURL: "http://x", AuthURL: "http://x"})
	client, err := s.CreateClient(ctx, "fuzz", []string{tokenFuzzRedirect})
	if err != nil {
		f.Fatal(err)
	}
	other, err := s.CreateClient(ctx, "other", []string{tokenFuzzRedirect})
	if err != nil {
		f.Fatal(err)
	}
	account := &store.Account{Account: api.Account{Username: "fuzz", FirstName: "F", LastName: "Z",
		Zipcode: "33602", TimeZone: "UTC", PreferredContact: api.ContactEmail}, PasswordHash: "-"}
	if err := db.WriteTx(ctx, func(q *store.Queries) error { return q.InsertAccount(ctx, account, time.Now()) }); err != nil {
		f.Fatal(err)
	}

	code := func(q *store.Queries, clientID string, expires time.Time, used bool) (string, error) {
		plain, hash := newSecret(prefixCode)
		redirect := tokenFuzzRedirect
		err := q.InsertAuthCode(ctx, &store.AuthCode{Hash: hash, ClientID: clientID, AccountID: account.ID,
			RedirectURI: &redirect, CodeChallenge: s256(rfc7636Verifier), Family: newID("f_"), ExpiresAt: expires})
		if err == nil && used {
			_, err = q.UseAuthCode(ctx, hash, time.Now())
		}
		return plain, err
	}
	refresh := func(q *store.Queries, state string) (string, error) {
		tok, err := s.issue(ctx, q, client.ID, account.ID, newID("f_"), true)
		if err != nil {
			return "", err
		}
		hash := hashSecret(tok.RefreshToken)
		switch state {
		case "spent":
			_, err = q.RotateToken(ctx, hash, time.Now())
		case "revoked":
			var t *store.Token
			if t, err = q.GetToken(ctx, hash); err == nil {
				_, err = q.RevokeFamily(ctx, t.Family, time.Now())
			}
		case "expired":
			plain, hash := newSecret(prefixRefresh)
			err = q.InsertToken(ctx, &store.Token{Hash: hash, Kind: store.TokenRefresh, ClientID: client.ID,
				AccountID: account.ID, Family: newID("f_"), ExpiresAt: time.Now().Add(-time.Minute)})
			return plain, err
		}
		return tok.RefreshToken, err
	}
	later, earlier := time.Now().Add(CodeTTL), time.Now().Add(-time.Minute)
	placeholders := []struct {
		word string
		make func(*store.Queries) (string, error)
	}{
		{"CLIENT_ID", func(*store.Queries) (string, error) { return client.ID, nil }},
		{"CLIENT_SECRET", func(*store.Queries) (string, error) { return client.Secret, nil }},
		{"NEW_CODE", func(q *store.Queries) (string, error) { return code(q, client.ID, later, false) }},
		{"SPENT_CODE", func(q *store.Queries) (string, error) { return code(q, client.ID, later, true) }},
		{"EXPIRED_CODE", func(q *store.Queries) (string, error) { return code(q, client.ID, earlier, false) }},
		{"FOREIGN_CODE", func(q *store.Queries) (string, error) { return code(q, other.ID, later, false) }},
		{"ACCOUNT_CODE", func(q *store.Queries) (string, error) { return s.IssueAccountCode(ctx, q, client.ID, account.ID) }},
		{"NEW_REFRESH", func(q *store.Queries) (string, error) { return refresh(q, "") }},
		{"SPENT_REFRESH", func(q *store.Queries) (string, error) { return refresh(q, "spent") }},
		{"REVOKED_REFRESH", func(q *store.Queries) (string, error) { return refresh(q, "revoked") }},
		{"EXPIRED_REFRESH", func(q *store.Queries) (string, error) { return refresh(q, "expired") }},
	}

	for _, seed := range []struct {
		body  string
		basic bool
	}{
		{"grant_type=client_credentials", true},
		{"grant_type=client_credentials&client_id=CLIENT_ID&client_secret=CLIENT_SECRET", false},
		{"grant_type=client_credentials&client_id=CLIENT_ID&client_secret=wrong", false},
		{"grant_type=client_credentials&client_secret=CLIENT_SECRET", true}, // both ways at once
		{"grant_type=client_credentials", false},
		{"grant_type=authorization_code&code=NEW_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=NEW_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=NEW_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb", true},
		{"grant_type=authorization_code&code=NEW_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=" + strings.Repeat("a", 43), true},
		{"grant_type=authorization_code&code=SPENT_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=EXPIRED_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=FOREIGN_CODE&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=ACCOUNT_CODE", true},
		{"grant_type=authorization_code&code=ACCOUNT_CODE&redirect_uri=http%3A%2F%2Fignored&code_verifier=" + rfc7636Verifier, true},
		{"grant_type=authorization_code&code=vcsc_unknown", true},
		{"grant_type=authorization_code", true},
		{"grant_type=refresh_token&refresh_token=NEW_REFRESH", true},
		{"grant_type=refresh_token&refresh_token=NEW_REFRESH&client_id=CLIENT_ID&client_secret=CLIENT_SECRET", false},
		{"grant_type=refresh_token&refresh_token=SPENT_REFRESH", true},
		{"grant_type=refresh_token&refresh_token=REVOKED_REFRESH", true},
		{"grant_type=refresh_token&refresh_token=EXPIRED_REFRESH", true},
		{"grant_type=refresh_token", true},
		{"grant_type=password&username=a&password=b", true},
		{"grant_type=client_credentials&grant_type=client_credentials", true},
		{"grant_type=%zz", true},
		{"grant_type=client_credentials;x=1", true},
		{"", true},
		{"", false},
	} {
		f.Add(seed.body, seed.basic)
	}

	f.Fuzz(func(t *testing.T, body string, basic bool) {
		for _, p := range placeholders {
			if !strings.Contains(body, p.word) {
				continue
			}
			var value string
			err := db.WriteTx(ctx, func(q *store.Queries) (err error) { value, err = p.make(q); return err })
			if err != nil {
				t.Fatalf("make %s: %v", p.word, err)
			}
			body = strings.ReplaceAll(body, p.word, value)
		}
		r := httptest.NewRequest(http.MethodPost, PathToken, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			r.SetBasicAuth(client.ID, client.Secret)
		}
		w := httptest.NewRecorder()
		s.HandleToken(w, r)

		status, raw := w.Code, w.Body.String()
		if status != http.StatusOK && status != http.StatusBadRequest && status != http.StatusUnauthorized {
			t.Fatalf("body %q basic=%v: status %d, want 200, 400 or 401: %s", body, basic, status, raw)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("body %q: Cache-Control %q, want no-store", body, cc)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("body %q: Content-Type %q", body, ct)
		}
		if strings.Contains(raw, client.Secret) {
			t.Fatalf("body %q: the response repeats the client secret: %s", body, raw)
		}
		var resp map[string]any
		if err := json.Unmarshal([]byte(raw), &resp); err != nil {
			t.Fatalf("body %q: response is not a JSON object: %q", body, raw)
		}

		if status != http.StatusOK {
			code, _ := resp["error"].(string)
			if !slices.Contains(oauthErrorCodes, code) {
				t.Fatalf("body %q: status %d with error %q, not one of RFC 6749 §5.2's: %s", body, status, code, raw)
			}
			if (status == http.StatusUnauthorized) != (code == "invalid_client") {
				t.Fatalf("body %q: status %d with error %q (401 is for invalid_client, and only it)", body, status, code)
			}
			if basic && status == http.StatusUnauthorized {
				t.Fatalf("body %q: valid Basic credentials refused: %s", body, raw)
			}
			if _, ok := resp["access_token"]; ok {
				t.Fatalf("body %q: an error carries a token: %s", body, raw)
			}
			return
		}

		// 200: a well-formed token for this client, with a refresh token unless it is a
		// client token. Only a well-formed form can get here.
		form, err := url.ParseQuery(body)
		if err != nil {
			t.Fatalf("body %q: 200 for a body that is not a valid form: %v", body, err)
		}
		var tok api.Token
		if err := json.Unmarshal([]byte(raw), &tok); err != nil {
			t.Fatal(err)
		}
		if tok.TokenType != "bearer" || tok.Mapi != client.ID || !strings.HasPrefix(tok.AccessToken, prefixAccess) ||
			tok.ExpiresIn != int64(AccessTokenTTL.Seconds()) {
			t.Fatalf("body %q: token %s", body, raw)
		}
		grant := form.Get("grant_type")
		wantRefresh := grant == api.GrantAuthorizationCode || grant == api.GrantRefreshToken
		if !wantRefresh && grant != api.GrantClientCredentials {
			t.Fatalf("body %q: 200 for grant_type %q", body, grant)
		}
		if hasRefresh := strings.HasPrefix(tok.RefreshToken, prefixRefresh); hasRefresh != wantRefresh {
			t.Fatalf("body %q: grant %s answered refresh_token %q", body, grant, tok.RefreshToken)
		}
	})
}
