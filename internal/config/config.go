// Package config holds the CLI's profiles: which service to talk to (base URL, auth URL)
// as which partner client. Profiles live in $XDG_CONFIG_HOME/vcs/config.yaml, read with a
// viper instance of their own; flags and VCS_* environment variables override them.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// LocalProfile is the built-in profile for `vcs server --dev` on this machine.
const LocalProfile = "local"

// The development server's client, as `vcs server --dev` creates it.
const (
	localBaseURL      = "http://127.0.0.1:8080"
	localClientID     = "vcs-dev"
	localClientSecret = "vcs-dev-secret"
)

// Environment variables, in the SPEC's precedence: flag > environment > file > built-in.
const (
	EnvProfile      = "VCS_PROFILE"
	EnvBaseURL      = "VCS_BASE_URL"
	EnvAuthURL      = "VCS_AUTH_URL"
	EnvClientID     = "VCS_CLIENT_ID"
	EnvClientSecret = "VCS_CLIENT_SECRET"
	EnvToken        = "VCS_TOKEN"
	// EnvKeyringTimeout bounds each OS keyring call (also keyring_timeout in the file).
	EnvKeyringTimeout = "VCS_KEYRING_TIMEOUT"
)

// Profile is everything the CLI needs to reach one service as one client.
type Profile struct {
	Name     string
	BaseURL  string
	AuthURL  string
	ClientID string
	// ClientSecret is set when it comes from the environment or the built-in local profile;
	// otherwise the caller reads it from the credential store.
	ClientSecret string
	// Token, from --token or VCS_TOKEN, replaces stored credentials entirely (for CI).
	Token string
}

// Overrides are the values given as flags; empty members do not override.
type Overrides struct {
	Profile, BaseURL, AuthURL, ClientID, Token string
}

// Config is the configuration file and the environment it is read in.
type Config struct {
	dir    string
	v      *viper.Viper
	getenv func(string) string
}

// Dir is the configuration directory: $XDG_CONFIG_HOME/vcs, or the platform's equivalent.
func Dir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "vcs"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration directory: %w", err)
	}
	return filepath.Join(d, "vcs"), nil
}

// Load reads dir/config.yaml if it exists; getenv looks up environment variables
// (os.Getenv when nil).
func Load(dir string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	v := viper.New()
	v.SetConfigFile(filepath.Join(dir, "config.yaml"))
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil && !errors.Is(err, os.ErrNotExist) {
		var notFound viper.ConfigFileNotFoundError
		if !errors.As(err, &notFound) {
			return nil, fmt.Errorf("read %s: %w", v.ConfigFileUsed(), err)
		}
	}
	return &Config{dir: dir, v: v, getenv: getenv}, nil
}

// Dir is the directory the configuration was loaded from.
func (c *Config) Dir() string { return c.dir }

// Path is the configuration file.
func (c *Config) Path() string { return c.v.ConfigFileUsed() }

var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// CheckProfileName reports why name cannot name a profile.
func CheckProfileName(name string) error {
	if !profileName.MatchString(name) {
		return fmt.Errorf("profile name %q must be lower-case letters, digits, . _ - (at most 64)", name)
	}
	return nil
}

// ActiveProfile is the name of the profile in use: the flag, VCS_PROFILE, the file's
// "profile" setting, or "local".
func (c *Config) ActiveProfile(flag string) string {
	for _, name := range []string{flag, c.getenv(EnvProfile), c.v.GetString("profile")} {
		if name != "" {
			return strings.ToLower(name)
		}
	}
	return LocalProfile
}

// Resolve returns the active profile with every override applied.
func (c *Config) Resolve(o Overrides) (Profile, error) {
	name := c.ActiveProfile(o.Profile)
	if err := CheckProfileName(name); err != nil {
		return Profile{}, err
	}
	p := Profile{Name: name}
	if name == LocalProfile {
		p.BaseURL, p.ClientID = localBaseURL, localClientID
	}
	key := "profiles." + name + "."
	fromFile := c.v.IsSet("profiles." + name)
	for _, f := range []struct {
		dst            *string
		flag, env, key string
	}{
		{&p.BaseURL, o.BaseURL, EnvBaseURL, "base_url"},
		{&p.AuthURL, o.AuthURL, EnvAuthURL, "auth_url"},
		{&p.ClientID, o.ClientID, EnvClientID, "client_id"},
		{&p.Token, o.Token, EnvToken, ""},
	} {
		switch {
		case f.flag != "":
			*f.dst = f.flag
		case c.getenv(f.env) != "":
			*f.dst = c.getenv(f.env)
		case f.key != "" && c.v.GetString(key+f.key) != "":
			*f.dst = c.v.GetString(key + f.key)
		}
	}
	p.ClientSecret = c.getenv(EnvClientSecret)
	if p.ClientSecret == "" && name == LocalProfile && p.ClientID == localClientID {
		p.ClientSecret = localClientSecret // the development client's, well known
	}
	if p.BaseURL == "" {
		if !fromFile {
			return Profile{}, fmt.Errorf("profile %q is not configured: run `vcs login --profile %s --base-url URL --client-id ID`", name, name)
		}
		return Profile{}, fmt.Errorf("profile %q has no base_url in %s", name, c.Path())
	}
	p.BaseURL = strings.TrimSuffix(p.BaseURL, "/")
	if err := checkURL("base URL", p.BaseURL); err != nil {
		return Profile{}, err
	}
	if p.AuthURL == "" {
		p.AuthURL = origin(p.BaseURL)
	}
	p.AuthURL = strings.TrimSuffix(p.AuthURL, "/")
	if err := checkURL("auth URL", p.AuthURL); err != nil {
		return Profile{}, err
	}
	return p, nil
}

func checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q must be an absolute http or https URL", what, raw)
	}
	return nil
}

// origin is the scheme and host of an absolute URL: where the authorization pages live
// when no auth URL is set (the service serves them at its root).
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// KeyringTimeout is how long an OS keyring call may take: VCS_KEYRING_TIMEOUT, the file's
// keyring_timeout, or 0 for the default.
func (c *Config) KeyringTimeout() (time.Duration, error) {
	raw := c.getenv(EnvKeyringTimeout)
	if raw == "" {
		raw = c.v.GetString("keyring_timeout")
	}
	if raw == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("keyring timeout %q must be a positive duration such as 10s", raw)
	}
	return d, nil
}

// Profiles returns the names of the profiles in the file, and "local".
func (c *Config) Profiles() []string {
	names := []string{LocalProfile}
	for name := range c.v.GetStringMap("profiles") {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// SaveProfile writes p's addresses and client id to the file (secrets never go there).
func (c *Config) SaveProfile(p Profile) error {
	if err := CheckProfileName(p.Name); err != nil {
		return err
	}
	key := "profiles." + p.Name + "."
	c.v.Set(key+"base_url", p.BaseURL)
	c.v.Set(key+"auth_url", p.AuthURL)
	c.v.Set(key+"client_id", p.ClientID)
	return c.write()
}

func (c *Config) write() error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", c.dir, err)
	}
	// Written beside and renamed over, so that a crash never leaves half a file.
	tmp := filepath.Join(c.dir, ".config.tmp.yaml")
	if err := c.v.WriteConfigAs(tmp); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	if err := os.Rename(tmp, c.Path()); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	return nil
}
