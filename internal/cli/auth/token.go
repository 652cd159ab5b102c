package auth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/session"
)

// TokenOptions are the inputs of `vcs token`.
type TokenOptions struct {
	IO      *iostreams.IOStreams
	Session func() (*session.Session, error)
	Globals *cmdutil.Globals

	Client   bool
	Refresh  bool
	Exchange string
	Save     bool
	SaveAs   string
	// Config is read only by --save-as, to add the new profile.
	Config func() (*config.Config, error)
}

// NewCmdToken returns `vcs token`.
func NewCmdToken(f *cmdutil.Factory, runF func(context.Context, *TokenOptions) error) *cobra.Command {
	opts := &TokenOptions{IO: f.IOStreams, Session: f.Session, Globals: f.Globals, Config: f.Config}
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print an access token for curl and scripts",
		Long: `Print the profile's access token, alone, on standard output: refreshed first when it
has expired (the new pair is stored).

  curl -H "Authorization: Bearer $(vcs token)" http://127.0.0.1:8080/vehicle/

--client prints a client-credentials token of the profile's partner client instead: the
kind of token that creates accounts. --exchange trades the code of an account-creation
response for that account's tokens; with --save they become the profile's login, with
--save-as NAME the login of a new profile on the same service.`,
		Example: `  vcs token
  vcs token --client
  vcs token --exchange vcsc_... --save-as ann`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n := 0
			for _, set := range []bool{opts.Client, opts.Refresh, opts.Exchange != ""} {
				if set {
					n++
				}
			}
			if n > 1 {
				return cmdutil.FlagErrorf("use one of --client, --refresh and --exchange")
			}
			if (opts.Save || opts.SaveAs != "") && opts.Exchange == "" {
				return cmdutil.FlagErrorf("--save and --save-as go with --exchange")
			}
			if opts.Save && opts.SaveAs != "" {
				return cmdutil.FlagErrorf("use --save or --save-as, not both")
			}
			if opts.SaveAs != "" {
				if err := config.CheckProfileName(opts.SaveAs); err != nil {
					return &cmdutil.FlagError{Err: err}
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tokenRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Client, "client", false, "print a client-credentials token of the partner client")
	fl.BoolVar(&opts.Refresh, "refresh", false, "refresh the access token now")
	fl.StringVar(&opts.Exchange, "exchange", "", "trade an account-creation `code` for the account's tokens")
	fl.BoolVar(&opts.Save, "save", false, "with --exchange: store the tokens as the profile's login")
	fl.StringVar(&opts.SaveAs, "save-as", "", "with --exchange: store the tokens as the login of a new `profile` on the same service")
	return cmd
}

func tokenRun(ctx context.Context, opts *TokenOptions) error {
	s, err := opts.Session()
	if err != nil {
		return err
	}
	var token string
	switch {
	case s.Profile.Token != "" && !opts.Client && opts.Exchange == "":
		if opts.Refresh {
			return cmdutil.FlagErrorf("--refresh: the token comes from --token or VCS_TOKEN and cannot be refreshed")
		}
		token = s.Profile.Token
	case opts.Client:
		cc, err := s.ClientCredentials(ctx)
		if err != nil {
			return err
		}
		tok, err := cc.Token(s.WithHTTP(ctx))
		if err != nil {
			return fmt.Errorf("get a client token: %w", err)
		}
		token = tok.AccessToken
	case opts.Exchange != "":
		ts, err := ExchangeCode(ctx, s, opts.Exchange)
		if err != nil {
			return err
		}
		if opts.Save || opts.SaveAs != "" {
			name := s.Profile.Name
			if opts.SaveAs != "" {
				name = opts.SaveAs
			}
			if err := SaveLoginAs(ctx, opts.Config, s, name, ts); err != nil {
				return err
			}
			fmt.Fprintf(opts.IO.ErrOut, "Logged in to %s as %s (account %d)\n", name, ts.Username, ts.AccountID)
		}
		token = ts.AccessToken
	case opts.Refresh:
		ts, err := s.Refresh(ctx)
		if err != nil {
			return err
		}
		token = ts.AccessToken
	default:
		tok, err := s.TokenSource(ctx).Token()
		if err != nil {
			return err
		}
		token = tok.AccessToken
	}
	_, err = fmt.Fprintln(opts.IO.Out, token)
	return err
}

// ExchangeCode trades the code of an account-creation response (bound to no redirect URI)
// for the new account's tokens, and says whose they are.
func ExchangeCode(ctx context.Context, s *session.Session, code string) (*session.TokenSet, error) {
	conf, err := s.OAuthConfig(ctx, "")
	if err != nil {
		return nil, err
	}
	tok, err := conf.Exchange(s.WithHTTP(ctx), code)
	if err != nil {
		return nil, fmt.Errorf("exchange the code: %w", err)
	}
	ts := session.FromOAuth2(tok)
	if err := identify(ctx, s, ts); err != nil {
		return nil, err
	}
	return ts, nil
}

// identify fills in whose tokens ts holds, by asking the service with them; it also proves
// that they work before anything is stored.
func identify(ctx context.Context, s *session.Session, ts *session.TokenSet) error {
	api := client.New(s.Profile.BaseURL, &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: ts.AccessToken}), Base: s.HTTP.Transport}})
	page, err := api.Accounts(ctx, client.Page{Limit: 1})
	if err != nil {
		return fmt.Errorf("check the new tokens: %w", err)
	}
	// A user token sees exactly its own account; a client token sees the accounts its
	// client created, and is nobody in particular.
	if len(page.Data) == 1 && page.TotalRecords != nil && *page.TotalRecords == 1 {
		ts.Username, ts.AccountID = page.Data[0].Username, page.Data[0].ID
	}
	return nil
}

// SaveLoginAs stores ts as the login of the profile called name. A profile other than
// from's own is created on from's service with from's partner client (address and client
// id in the configuration file, the client secret in the credential store), so that it can
// refresh its tokens on its own.
func SaveLoginAs(ctx context.Context, cfgFn func() (*config.Config, error), from *session.Session, name string, ts *session.TokenSet) error {
	if name == from.Profile.Name {
		return from.Save(ctx, ts)
	}
	secret, err := from.ClientSecret(ctx)
	if err != nil {
		return err
	}
	cfg, err := cfgFn()
	if err != nil {
		return err
	}
	to := &session.Session{Profile: from.Profile, Store: from.Store, HTTP: from.HTTP, Now: from.Now}
	to.Profile.Name, to.Profile.Token, to.Profile.ClientSecret = name, "", ""
	if err := to.Save(ctx, ts); err != nil {
		return err
	}
	if err := to.Store.Set(ctx, name, credstore.KeyClientSecret, secret); err != nil {
		return fmt.Errorf("store the client secret: %w", err)
	}
	return cfg.SaveProfile(to.Profile)
}
