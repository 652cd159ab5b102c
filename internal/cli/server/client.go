package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server"
)

// storeFlags name the database an operator command works on.
type storeFlags struct {
	DataDir string
	Env     string
}

func (s *storeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.DataDir, "data-dir", "", "`directory` of the service's databases (default $XDG_DATA_HOME/vcs)")
	cmd.Flags().StringVar(&s.Env, "env", server.EnvSandbox, "environment: sandbox or production")
}

// open opens the environment's OAuth server directly on its database; the service may be
// running at the same time.
func (s *storeFlags) open(ctx context.Context) (*oauth.Server, func() error, error) {
	dir := s.DataDir
	if dir == "" {
		var err error
		if dir, err = server.DefaultDataDir(); err != nil {
			return nil, nil, err
		}
	}
	db, err := server.OpenStore(ctx, dir, s.Env)
	if err != nil {
		return nil, nil, err
	}
	return oauth.New(db, oauth.Config{}), db.Close, nil
}

func newCmdClient(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client <command>",
		Short: "Register and remove partner clients",
		Long: `Partner clients are the applications that may use the service's OAuth 2.0 endpoints.
These commands work on the service's database directly, on this machine.`,
	}
	cmd.AddCommand(newCmdClientCreate(f, nil), newCmdClientList(f, nil), newCmdClientDelete(f, nil))
	return cmd
}

// ClientCreateOptions are the flags of `vcs server client create`.
type ClientCreateOptions struct {
	IO           *iostreams.IOStreams
	Store        storeFlags
	Name         string
	RedirectURIs []string
	Output       output.Options
}

func newCmdClientCreate(f *cmdutil.Factory, runF func(context.Context, *ClientCreateOptions) error) *cobra.Command {
	opts := &ClientCreateOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "create --name NAME [--redirect-uri URI]...",
		Short: "Register a partner client and print its id and secret",
		Long: `Register a partner client. Its secret is printed once and stored only as a hash: keep it now.

A redirect URI of http://127.0.0.1/PATH or http://[::1]/PATH without a port matches any
port (RFC 8252), for command-line and desktop clients; every other redirect URI must
match exactly.`,
		Example: `  vcs server client create --name "Fleet dashboard" --redirect-uri https://fleet.example.com/oauth/callback
  vcs server client create --name cli --redirect-uri http://127.0.0.1/callback -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if strings.TrimSpace(opts.Name) == "" {
				return cmdutil.FlagErrorf("--name is required")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return clientCreateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the client's `name`, shown on the login page")
	cmd.Flags().StringArrayVar(&opts.RedirectURIs, "redirect-uri", nil, "a redirect `URI` the client may use (repeatable)")
	opts.Store.add(cmd)
	opts.Output.AddFlags(cmd)
	return cmd
}

func clientCreateRun(ctx context.Context, opts *ClientCreateOptions) error {
	o, closeDB, err := opts.Store.open(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	c, err := o.CreateClient(ctx, opts.Name, opts.RedirectURIs)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if opts.Output.Structured() {
		return opts.Output.Print(opts.IO, c, nil)
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "Created client %q.\n\n", c.Name)
	fmt.Fprintf(w, "  client_id:      %s\n", c.ID)
	fmt.Fprintf(w, "  client_secret:  %s\n", c.Secret)
	for _, u := range c.RedirectURIs {
		fmt.Fprintf(w, "  redirect_uri:   %s\n", u)
	}
	fmt.Fprintln(opts.IO.ErrOut, "\nThe secret is shown only now. Store it somewhere safe.")
	return nil
}

// ClientListOptions are the flags of `vcs server client list`.
type ClientListOptions struct {
	IO     *iostreams.IOStreams
	Store  storeFlags
	Output output.Options
}

func newCmdClientList(f *cmdutil.Factory, runF func(context.Context, *ClientListOptions) error) *cobra.Command {
	opts := &ClientListOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List partner clients",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return clientListRun(cmd.Context(), opts)
		},
	}
	opts.Store.add(cmd)
	opts.Output.AddFlags(cmd)
	return cmd
}

func clientListRun(ctx context.Context, opts *ClientListOptions) error {
	o, closeDB, err := opts.Store.open(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	clients, err := o.ListClients(ctx)
	if err != nil {
		return fmt.Errorf("list clients: %w", err)
	}
	if len(clients) == 0 && !opts.Output.Structured() && opts.IO.IsStdoutTTY() {
		fmt.Fprintln(opts.IO.ErrOut, "No clients. Register one with: vcs server client create --name NAME")
		return nil
	}
	return opts.Output.Print(opts.IO, clients, func(t *output.Table) {
		t.Header("client id", "name", "redirect uris")
		for _, c := range clients {
			t.Row(c.ID, c.Name, strings.Join(c.RedirectURIs, " "))
		}
	})
}

// ClientDeleteOptions are the flags of `vcs server client delete`.
type ClientDeleteOptions struct {
	IO    *iostreams.IOStreams
	Store storeFlags
	ID    string
	Yes   bool
}

func newCmdClientDelete(f *cmdutil.Factory, runF func(context.Context, *ClientDeleteOptions) error) *cobra.Command {
	opts := &ClientDeleteOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "delete CLIENT_ID",
		Short: "Remove a partner client and end its tokens",
		Long: `Remove a partner client. Its tokens stop working at once; accounts it created remain.
On a terminal it asks for confirmation; elsewhere it needs --yes.`,
		Args: cmdutil.ExactArgs(1, "give the id of the client to delete"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return clientDeleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	opts.Store.add(cmd)
	return cmd
}

func clientDeleteRun(ctx context.Context, opts *ClientDeleteOptions) error {
	if err := cmdutil.ConfirmDestructive(opts.IO, opts.Yes, fmt.Sprintf("Delete client %s and end its tokens?", opts.ID)); err != nil {
		return err
	}
	o, closeDB, err := opts.Store.open(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := o.DeleteClient(ctx, opts.ID); err != nil {
		return fmt.Errorf("delete client: %w", err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Deleted client %s.\n", opts.ID)
	return nil
}
