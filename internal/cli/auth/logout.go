package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/session"
)

// LogoutOptions are the inputs of `vcs logout`.
type LogoutOptions struct {
	IO      *iostreams.IOStreams
	Session func() (*session.Session, error)
}

// NewCmdLogout returns `vcs logout`.
func NewCmdLogout(f *cmdutil.Factory, runF func(context.Context, *LogoutOptions) error) *cobra.Command {
	opts := &LogoutOptions{IO: f.IOStreams, Session: f.Session}
	return &cobra.Command{
		Use:   "logout",
		Short: "Revoke the profile's tokens and forget them",
		Long: `Revoke the profile's login at the service (RFC 7009: the access token, the refresh
token and everything refreshed from them) and delete the tokens from this machine. When
the service cannot be reached, the tokens are still deleted here, with a warning: they
then stay valid at the service until they expire.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logoutRun(cmd.Context(), opts)
		},
	}
}

func logoutRun(ctx context.Context, opts *LogoutOptions) error {
	s, err := opts.Session()
	if err != nil {
		return err
	}
	ts, err := s.Load(ctx)
	if err != nil {
		return err
	}
	token := ts.RefreshToken
	if token == "" {
		token = ts.AccessToken
	}
	revokeErr := revoke(ctx, s, token)
	if err := s.Forget(ctx); err != nil {
		return err
	}
	if revokeErr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "warning: could not revoke the tokens at the service (%v); they were deleted here but stay valid until they expire\n", revokeErr)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Logged out of %s\n", s.Profile.Name)
	return nil
}

// revoke sends the token to the revocation endpoint with the client's credentials.
func revoke(ctx context.Context, s *session.Session, token string) error {
	conf, err := s.OAuthConfig(ctx, "")
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.RevokeURL(),
		strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(conf.ClientID), url.QueryEscape(conf.ClientSecret))
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return errors.New(strings.TrimSpace(fmt.Sprintf("%s %s", resp.Status, body)))
	}
	return nil
}
