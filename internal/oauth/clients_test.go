package oauth

import "testing"

func TestRedirectAllowed(t *testing.T) {
	registered := []string{
		"http://127.0.0.1/cb",
		"http://[::1]/cb",
		"http://127.0.0.1:8000/fixed",
		"https://partner.example/oauth/cb?app=1",
		"http://localhost/cb",
	}
	for _, tc := range []struct {
		requested string
		ok        bool
	}{
		// Exact matches, ports or not.
		{"http://127.0.0.1/cb", true},
		{"http://[::1]/cb", true},
		{"http://127.0.0.1:8000/fixed", true},
		{"https://partner.example/oauth/cb?app=1", true},
		{"http://localhost/cb", true},

		// RFC 8252 §7.3: a loopback IP registered without a port takes any port.
		{"http://127.0.0.1:1/cb", true},
		{"http://127.0.0.1:41234/cb", true},
		{"http://127.0.0.1:65535/cb", true},
		{"http://[::1]:41234/cb", true},

		// ... but only the port may differ.
		{"http://127.0.0.1:41234/cb/", false},
		{"http://127.0.0.1:41234/CB", false},
		{"http://127.0.0.1:41234/cb/../cb", false},
		{"http://127.0.0.1:41234/%63b", false},
		{"http://127.0.0.1:41234/", false},
		{"http://127.0.0.1:41234/cb?x=1", false},
		{"https://127.0.0.1:41234/cb", false},
		{"http://localhost:41234/cb", false}, // a name, not the loopback IP the client registered
		{"http://127.0.0.2:41234/cb", false}, // another loopback address
		{"http://[::1]:41234/cb?x", false},
		{"http://[0:0:0:0:0:0:0:1]:41234/cb", false}, // the same address spelled otherwise is not an exact match
		{"http://[::ffff:127.0.0.1]:41234/cb", false},
		{"http://user@127.0.0.1:41234/cb", false},
		{"http://user:pw@127.0.0.1:41234/cb", false},
		{"http://127.0.0.1:41234/cb#frag", false},
		{"http://127.0.0.1:41234/cb#", false},
		{"http://127.0.0.1:/cb", false}, // an empty port is not a port
		{"http://127.0.0.1:x/cb", false},
		{"http://127.0.0.1.evil.example:41234/cb", false},
		{"//127.0.0.1:41234/cb", false},
		{"127.0.0.1:41234/cb", false},

		// A registered port, or a host that is not a loopback IP, means exact match only.
		{"http://127.0.0.1:8001/fixed", false},
		{"http://127.0.0.1/fixed", false},
		{"http://localhost:41234/cb", false},
		{"https://partner.example:8443/oauth/cb?app=1", false},
		{"https://partner.example/oauth/cb?app=2", false},
		{"https://partner.example/oauth/cb", false},

		{"", false},
		{"http://127.0.0.1:41234/cb\x00", false},
	} {
		if got := redirectAllowed(registered, tc.requested); got != tc.ok {
			t.Errorf("redirectAllowed(%q) = %v, want %v", tc.requested, got, tc.ok)
		}
	}
	if redirectAllowed(nil, "http://127.0.0.1/cb") {
		t.Error("a client with no redirect URIs allows one")
	}
}

func TestRedirectAllowedRegisteredQuery(t *testing.T) {
	// A loopback URI registered with a query keeps that query, on any port.
	reg := []string{"http://127.0.0.1/cb?app=cli"}
	if !redirectAllowed(reg, "http://127.0.0.1:5000/cb?app=cli") {
		t.Error("same query, other port refused")
	}
	if redirectAllowed(reg, "http://127.0.0.1:5000/cb") || redirectAllowed(reg, "http://127.0.0.1:5000/cb?app=web") {
		t.Error("other query allowed")
	}
}

func TestCheckRedirectURI(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://partner.example/cb", true},
		{"https://partner.example:8443/cb?x=1", true},
		{"http://127.0.0.1/cb", true},
		{"http://127.0.0.1:8000/cb", true},
		{"http://[::1]/cb", true},
		{"http://localhost:8000/cb", true},

		{"http://partner.example/cb", false}, // http only on loopback
		{"http://localhost.partner.example/cb", false},
		{"http://127.0.0.1.nip.io/cb", false},
		{"http://10.0.0.1/cb", false},
		{"/cb", false}, // relative
		{"cb", false},
		{"//partner.example/cb", false},
		{"https:///cb", false}, // no host
		{"https://partner.example/cb#frag", false},
		{"https://partner.example/cb#", false},
		{"ftp://partner.example/cb", false},
		{"javascript:alert(1)", false},
		{"data:text/html,hi", false},
		{"com.partner.app:/cb", false}, // private-use schemes are not offered
		{"file:///etc/passwd", false},
		{"", false},
		{"https://partner.example/\x7f", false},
	} {
		err := checkRedirectURI(tc.uri)
		if (err == nil) != tc.ok {
			t.Errorf("checkRedirectURI(%q) = %v, want ok=%v", tc.uri, err, tc.ok)
		}
	}
}
