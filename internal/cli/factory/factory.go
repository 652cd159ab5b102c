// Package factory builds the CLI's real dependencies: configuration, credential store,
// HTTP clients and sessions, each built on first use.
package factory

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/pkg/browser"
	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/session"
)

// New returns the factory of a vcs process.
func New(ios *iostreams.IOStreams, version string) *cmdutil.Factory {
	f := &cmdutil.Factory{
		IOStreams: ios,
		Version:   version,
		Globals:   &cmdutil.Globals{},
		Browser:   &systemBrowser{out: ios.ErrOut},
		Now:       time.Now,
	}
	f.Config = sync.OnceValues(func() (*config.Config, error) {
		dir, err := config.Dir()
		if err != nil {
			return nil, err
		}
		return config.Load(dir, nil)
	})
	f.Profile = func() (config.Profile, error) {
		cfg, err := f.Config()
		if err != nil {
			return config.Profile{}, err
		}
		return cfg.Resolve(config.Overrides{Profile: f.Globals.Profile, Token: f.Globals.Token})
	}
	f.Credentials = sync.OnceValues(func() (*credstore.Store, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		timeout, err := cfg.KeyringTimeout()
		if err != nil {
			return nil, err
		}
		return credstore.New(credstore.Options{
			Dir: cfg.Dir(), Insecure: f.Globals.InsecureStorage, Timeout: timeout, Notice: ios.ErrOut,
		}), nil
	})
	f.HTTPClient = sync.OnceValues(func() (*http.Client, error) {
		var debug io.Writer
		if f.Globals.Debug {
			debug = ios.ErrOut
		}
		return &http.Client{Transport: client.NewTransport(version, debug), Timeout: 2 * time.Minute}, nil
	})
	f.Session = func() (*session.Session, error) {
		p, err := f.Profile()
		if err != nil {
			return nil, err
		}
		store, err := f.Credentials()
		if err != nil {
			return nil, err
		}
		hc, err := f.HTTPClient()
		if err != nil {
			return nil, err
		}
		return &session.Session{Profile: p, Store: store, HTTP: hc, Now: f.Now}, nil
	}
	f.APIClient = func(ctx context.Context) (*client.Client, error) {
		p, err := f.Profile()
		if err != nil {
			return nil, err
		}
		hc, err := f.HTTPClient()
		if err != nil {
			return nil, err
		}
		var ts oauth2.TokenSource
		if p.Token != "" {
			// --token / VCS_TOKEN: no stored credentials are read or written.
			ts = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: p.Token, TokenType: "Bearer"})
		} else {
			s, err := f.Session()
			if err != nil {
				return nil, err
			}
			cur, err := s.Load(ctx)
			if err != nil {
				return nil, err // fail before the request: "not logged in"
			}
			ts = s.TokenSourceFrom(ctx, cur)
		}
		return client.New(p.BaseURL, &http.Client{
			Transport: &oauth2.Transport{Source: ts, Base: hc.Transport},
			Timeout:   hc.Timeout,
		}), nil
	}
	f.ClientAPIClient = func(ctx context.Context) (*client.Client, error) {
		s, err := f.Session()
		if err != nil {
			return nil, err
		}
		cc, err := s.ClientCredentials(ctx)
		if err != nil {
			return nil, err
		}
		return client.New(s.Profile.BaseURL, cc.Client(s.WithHTTP(ctx))), nil
	}
	return f
}

// systemBrowser opens URLs with pkg/browser, whose own output (the launcher's chatter)
// goes to stderr so that stdout stays clean for data.
type systemBrowser struct{ out io.Writer }

func (b *systemBrowser) Browse(url string) error {
	// pkg/browser's output streams are package variables; one login opens one browser.
	browser.Stdout, browser.Stderr = b.out, b.out
	return browser.OpenURL(url)
}
