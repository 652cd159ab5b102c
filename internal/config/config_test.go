package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fileWithProfiles = `profile: prod
keyring_timeout: 12s
profiles:
  prod:
    base_url: https://api.example.com/v1
    auth_url: https://auth.example.com
    client_id: c_prod
  local:
    base_url: http://127.0.0.1:9090
`

func load(t *testing.T, file string, env map[string]string) *Config {
	t.Helper()
	dir := t.TempDir()
	if file != "" {
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Load(dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBuiltInLocalProfile(t *testing.T) {
	p, err := load(t, "", nil).Resolve(Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{Name: "local", BaseURL: "http://127.0.0.1:8080", AuthURL: "http://127.0.0.1:8080",
		ClientID: "vcs-dev", ClientSecret: "vcs-dev-secret"}
	if p != want {
		t.Fatalf("local profile = %+v, want %+v", p, want)
	}
}

// TestPrecedence: flag > environment > file > built-in, member by member.
func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		o    Overrides
		want Profile
	}{
		{name: "file chooses the profile", file: fileWithProfiles,
			want: Profile{Name: "prod", BaseURL: "https://api.example.com/v1", AuthURL: "https://auth.example.com", ClientID: "c_prod"}},
		{name: "environment beats the file", file: fileWithProfiles,
			env:  map[string]string{EnvProfile: "local", EnvClientID: "c_env"},
			want: Profile{Name: "local", BaseURL: "http://127.0.0.1:9090", AuthURL: "http://127.0.0.1:9090", ClientID: "c_env"}},
		{name: "flag beats the environment", file: fileWithProfiles,
			env:  map[string]string{EnvProfile: "local", EnvBaseURL: "http://env.example.com", EnvToken: "from-env"},
			o:    Overrides{Profile: "prod", BaseURL: "https://flag.example.com", Token: "from-flag"},
			want: Profile{Name: "prod", BaseURL: "https://flag.example.com", AuthURL: "https://auth.example.com", ClientID: "c_prod", Token: "from-flag"}},
		{name: "file beats the built-in", file: fileWithProfiles, o: Overrides{Profile: "local"},
			want: Profile{Name: "local", BaseURL: "http://127.0.0.1:9090", AuthURL: "http://127.0.0.1:9090", ClientID: "vcs-dev", ClientSecret: "vcs-dev-secret"}},
		{name: "auth URL defaults to the base URL's origin", env: map[string]string{EnvBaseURL: "https://api.example.com/v1/"},
			want: Profile{Name: "local", BaseURL: "https://api.example.com/v1", AuthURL: "https://api.example.com", ClientID: "vcs-dev", ClientSecret: "vcs-dev-secret"}},
		{name: "built-in secret only for the built-in client", env: map[string]string{EnvClientID: "c_other"},
			want: Profile{Name: "local", BaseURL: "http://127.0.0.1:8080", AuthURL: "http://127.0.0.1:8080", ClientID: "c_other"}},
		{name: "secret from the environment", env: map[string]string{EnvClientSecret: "s3cret", EnvToken: "tok"},
			want: Profile{Name: "local", BaseURL: "http://127.0.0.1:8080", AuthURL: "http://127.0.0.1:8080", ClientID: "vcs-dev", ClientSecret: "s3cret", Token: "tok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := load(t, tc.file, tc.env).Resolve(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if p != tc.want {
				t.Fatalf("got  %+v\nwant %+v", p, tc.want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		file string
		env  map[string]string
		o    Overrides
		want string
	}{
		"unknown profile":  {o: Overrides{Profile: "staging"}, want: "vcs login --profile staging"},
		"bad profile name": {o: Overrides{Profile: "../etc"}, want: "profile name"},
		"bad URL":          {env: map[string]string{EnvBaseURL: "ftp://x"}, want: "absolute http or https URL"},
		"no base_url":      {file: "profiles:\n  ci:\n    client_id: x\n", o: Overrides{Profile: "ci"}, want: "has no base_url"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env).Resolve(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSaveProfileKeepsTheRestAndNoSecrets(t *testing.T) {
	c := load(t, fileWithProfiles, nil)
	if err := c.SaveProfile(Profile{Name: "ci", BaseURL: "https://ci.example.com", AuthURL: "https://ci.example.com",
		ClientID: "c_ci", ClientSecret: "must-not-be-written", Token: "nor-this"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(c.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "must-not-be-written") || strings.Contains(string(raw), "nor-this") {
		t.Fatalf("a secret was written to the configuration file:\n%s", raw)
	}
	again, err := Load(c.Dir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prod", "ci"} {
		if _, err := again.Resolve(Overrides{Profile: name}); err != nil {
			t.Errorf("profile %s after saving: %v", name, err)
		}
	}
	if got := strings.Join(again.Profiles(), ","); got != "ci,local,prod" {
		t.Errorf("profiles = %s", got)
	}
}

func TestKeyringTimeout(t *testing.T) {
	if d, err := load(t, fileWithProfiles, nil).KeyringTimeout(); err != nil || d != 12*time.Second {
		t.Errorf("from the file: %v %v", d, err)
	}
	if d, err := load(t, fileWithProfiles, map[string]string{EnvKeyringTimeout: "30s"}).KeyringTimeout(); err != nil || d != 30*time.Second {
		t.Errorf("from the environment: %v %v", d, err)
	}
	if d, err := load(t, "", nil).KeyringTimeout(); err != nil || d != 0 {
		t.Errorf("default: %v %v", d, err)
	}
	if _, err := load(t, "", map[string]string{EnvKeyringTimeout: "soon"}).KeyringTimeout(); err == nil {
		t.Error("a bad duration was accepted")
	}
}

func TestBrokenFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("profiles: [unclosed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, nil); err == nil {
		t.Fatal("a broken configuration file was accepted")
	}
}
