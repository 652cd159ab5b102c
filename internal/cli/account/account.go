// Package account is `vcs account`: list, read, create, update and delete accounts.
package account

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/auth"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/session"
)

// NewCmdAccount returns `vcs account` with its subcommands.
func NewCmdAccount(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "account <command>",
		Aliases: []string{"accounts"},
		Short:   "Manage accounts",
		Long: `Read, update and delete your account; as a partner, create accounts and manage the ones
your client created.

Accounts are created with a client-credentials token of the profile's partner client, as
the service requires. The other commands use your login, or with --as-client the partner
client's token, which sees the accounts that client created.`,
	}
	var asClient bool
	cmd.PersistentFlags().BoolVar(&asClient, "as-client", false, "act as the partner client (client-credentials token) instead of your login")
	pick := func(ctx context.Context) (*client.Client, error) {
		if asClient {
			return f.ClientAPIClient(ctx)
		}
		return f.APIClient(ctx)
	}
	cmd.AddCommand(newCmdList(f, pick, nil), newCmdGet(f, pick, nil), NewCmdCreate(f, nil), newCmdUpdate(f, pick, nil), newCmdDelete(f, pick, nil))
	return cmd
}

type apiClientFunc func(context.Context) (*client.Client, error)

func parseID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, cmdutil.FlagErrorf("account id %q must be a positive integer", arg)
	}
	return id, nil
}

// ListOptions are the inputs of `vcs account list`.
type ListOptions struct {
	IO        *iostreams.IOStreams
	APIClient apiClientFunc
	Output    output.Options
	List      cmdutil.ListFlags
}

func newCmdList(f *cmdutil.Factory, pick apiClientFunc, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, APIClient: pick}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the accounts you may see",
		Long:    "List your account, or with --as-client the accounts your partner client created.",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if err := opts.List.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	opts.List.Add(cmd, "accounts")
	opts.Output.AddFlags(cmd)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	accounts, total, err := cmdutil.FetchList(ctx, opts.List, c.Accounts, c.AllAccounts)
	if err != nil {
		return fmt.Errorf("list accounts: %w", err)
	}
	if cmdutil.ListNotice(opts.IO, &opts.Output, opts.List, "accounts", len(accounts), total) {
		return nil
	}
	return opts.Output.Print(opts.IO, accounts, func(t *output.Table) {
		t.Header("id", "username", "name", "email", "phone", "zipcode", "time zone", "contact", "created")
		for _, a := range accounts {
			t.Row(strconv.FormatInt(a.ID, 10), a.Username, a.FirstName+" "+a.LastName, str(a.Email), str(a.Phone),
				a.Zipcode, a.TimeZone, a.PreferredContact, a.DateCreated.String())
		}
	})
}

// GetOptions are the inputs of `vcs account get`.
type GetOptions struct {
	IO        *iostreams.IOStreams
	APIClient apiClientFunc
	Output    output.Options
	ID        int64
}

func newCmdGet(f *cmdutil.Factory, pick apiClientFunc, runF func(context.Context, *GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, APIClient: pick}
	cmd := &cobra.Command{
		Use:     "get [ACCOUNT_ID]",
		Aliases: []string{"view", "show"},
		Short:   "Show an account (yours, when no id is given)",
		Args: func(cmd *cobra.Command, args []string) error {
			// cobra.MaximumNArgs's error is not a usage error (exit code 1, not 2).
			if len(args) > 1 {
				return cmdutil.FlagErrorf("too many arguments: give at most one account id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if len(args) == 1 {
				id, err := parseID(args[0])
				if err != nil {
					return err
				}
				opts.ID = id
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
	opts.Output.AddFlags(cmd)
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	var a *api.Account
	if opts.ID == 0 {
		env, err := c.Accounts(ctx, client.Page{Limit: 2})
		if err != nil {
			return fmt.Errorf("get account: %w", err)
		}
		if len(env.Data) != 1 {
			return cmdutil.FlagErrorf("this token sees %d accounts: give an account id", len(env.Data))
		}
		a = &env.Data[0]
	} else if a, err = c.Account(ctx, opts.ID); err != nil {
		return fmt.Errorf("get account %d: %w", opts.ID, err)
	}
	return printAccount(opts.IO, &opts.Output, a)
}

func printAccount(ios *iostreams.IOStreams, o *output.Options, a *api.Account) error {
	return o.Print(ios, a, func(t *output.Table) {
		t.Header("field", "value")
		t.Row("id", strconv.FormatInt(a.ID, 10))
		t.Row("username", a.Username)
		t.Row("firstName", a.FirstName)
		t.Row("lastName", a.LastName)
		t.Row("email", str(a.Email))
		t.Row("phone", str(a.Phone))
		t.Row("zipcode", a.Zipcode)
		t.Row("timeZone", a.TimeZone)
		t.Row("preferredContact", a.PreferredContact)
		t.Row("dateCreated", a.DateCreated.String())
	})
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fields are the flags that set account members, shared by create and update. The password
// is never a flag value: it is asked for, or read with --password-stdin.
type fields struct {
	firstName, lastName, zipcode, email, phone, timeZone, contact, username string
	passwordStdin                                                           bool
	file                                                                    string
}

func (v *fields) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&v.firstName, "first-name", "", "first name")
	fl.StringVar(&v.lastName, "last-name", "", "last name")
	fl.StringVar(&v.zipcode, "zipcode", "", "zip code where the owner mostly drives")
	fl.StringVar(&v.email, "email", "", "e-mail address (empty clears it)")
	fl.StringVar(&v.phone, "phone", "", "phone number (empty clears it)")
	fl.StringVar(&v.timeZone, "time-zone", "", "IANA time zone, e.g. America/New_York")
	fl.StringVar(&v.contact, "preferred-contact", "", "PHONE or EMAIL")
	fl.StringVar(&v.username, "username", "", "username")
	fl.BoolVar(&v.passwordStdin, "password-stdin", false, "read the password from standard input")
	fl.StringVarP(&v.file, "file", "f", "", "read the account's members from a JSON `file` (- for stdin); flags override it")
	_ = cmd.RegisterFlagCompletionFunc("preferred-contact", cobra.FixedCompletions([]string{"PHONE", "EMAIL"}, cobra.ShellCompDirectiveNoFileComp))
}

func (v *fields) input(cmd *cobra.Command, stdin io.Reader) (api.AccountInput, error) {
	var in api.AccountInput
	if v.file != "" {
		if v.file == "-" && v.passwordStdin {
			return in, cmdutil.FlagErrorf("-f - and --password-stdin both read stdin; use one")
		}
		if err := cmdutil.ReadJSONFile(v.file, stdin, &in); err != nil {
			return in, err
		}
	}
	opt := func(flag, val string) api.Optional[string] { return cmdutil.OptionalString(cmd, flag, val) }
	in.FirstName = cmdutil.Merge(in.FirstName, opt("first-name", v.firstName))
	in.LastName = cmdutil.Merge(in.LastName, opt("last-name", v.lastName))
	in.Zipcode = cmdutil.Merge(in.Zipcode, opt("zipcode", v.zipcode))
	in.Email = cmdutil.Merge(in.Email, opt("email", v.email))
	in.Phone = cmdutil.Merge(in.Phone, opt("phone", v.phone))
	in.TimeZone = cmdutil.Merge(in.TimeZone, opt("time-zone", v.timeZone))
	in.PreferredContact = cmdutil.Merge(in.PreferredContact, opt("preferred-contact", strings.ToUpper(v.contact)))
	in.Username = cmdutil.Merge(in.Username, opt("username", v.username))
	if v.passwordStdin {
		pw, err := cmdutil.ReadLine(stdin)
		if err != nil || pw == "" {
			return in, cmdutil.FlagErrorf("--password-stdin: no password on standard input")
		}
		in.Password = api.Some(pw)
	}
	return in, nil
}

// askPassword asks for a new password twice on the terminal.
func askPassword(ios *iostreams.IOStreams) (string, error) {
	pw, err := cmdutil.PromptSecret(ios, "Password: ", "--password-stdin")
	if err != nil {
		return "", err
	}
	again, err := cmdutil.PromptSecret(ios, "Password again: ", "--password-stdin")
	if err != nil {
		return "", err
	}
	if pw != again {
		return "", cmdutil.FlagErrorf("the passwords do not match")
	}
	return pw, nil
}

// CreateOptions are the inputs of `vcs account create`.
type CreateOptions struct {
	IO              *iostreams.IOStreams
	ClientAPIClient apiClientFunc
	Session         func() (*session.Session, error)
	Output          output.Options
	Input           api.AccountInput
	Login           bool
	LoginAs         string
	Config          func() (*config.Config, error)
}

// NewCmdCreate returns `vcs account create`.
func NewCmdCreate(f *cmdutil.Factory, runF func(context.Context, *CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, ClientAPIClient: f.ClientAPIClient, Session: f.Session, Config: f.Config}
	var fl fields
	cmd := &cobra.Command{
		Use:   "create [flags]",
		Short: "Create an account (as the partner client)",
		Long: `Create an account with a client-credentials token of the profile's partner client. The
password is asked for on a terminal, or read with --password-stdin, or taken from -f.

The service answers with an authorization code for the new account. With --login it is
exchanged at once and the new account becomes the profile's login; otherwise it is shown
(it works once, for 10 minutes: vcs token --exchange CODE).`,
		Example: `  vcs account create --first-name Ann --last-name Lee --zipcode 33602 \
      --time-zone America/New_York --preferred-contact EMAIL --username ann
  vcs account create -f ann.json --login-as ann`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			in, err := fl.input(cmd, opts.IO.In)
			if err != nil {
				return err
			}
			if opts.Login && opts.LoginAs != "" {
				return cmdutil.FlagErrorf("use --login or --login-as, not both")
			}
			if opts.LoginAs != "" {
				if err := config.CheckProfileName(opts.LoginAs); err != nil {
					return &cmdutil.FlagError{Err: err}
				}
			}
			if !in.Password.Present() {
				if in.Password.Value, err = askPassword(opts.IO); err != nil {
					return err
				}
				in.Password.Set = true
			}
			opts.Input = in
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	fl.add(cmd)
	cmd.Flags().BoolVar(&opts.Login, "login", false, "log in as the new account (stores its tokens as the profile's login)")
	cmd.Flags().StringVar(&opts.LoginAs, "login-as", "", "log in as the new account in a new `profile` on the same service")
	opts.Output.AddFlags(cmd)
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.ClientAPIClient(ctx)
	if err != nil {
		return err
	}
	a, err := c.CreateAccount(ctx, opts.Input)
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	code := ""
	if a.AccessToken != nil {
		code = a.AccessToken.Code
	}
	if opts.Login || opts.LoginAs != "" {
		s, err := opts.Session()
		if err != nil {
			return err
		}
		ts, err := auth.ExchangeCode(ctx, s, code)
		if err != nil {
			return fmt.Errorf("log in as account %d: %w", a.ID, err)
		}
		name := s.Profile.Name
		if opts.LoginAs != "" {
			name = opts.LoginAs
		}
		if err := auth.SaveLoginAs(ctx, opts.Config, s, name, ts); err != nil {
			return err
		}
		a.AccessToken = nil // spent: do not print it
		fmt.Fprintf(opts.IO.ErrOut, "Created account %d and logged in to %s as %s\n", a.ID, name, a.Username)
	} else if !opts.Output.Structured() {
		fmt.Fprintf(opts.IO.ErrOut, "Created account %d. Its one-time code (valid 10 minutes):\n  vcs token --exchange %s --save\n", a.ID, code)
	}
	return printAccount(opts.IO, &opts.Output, a)
}

// UpdateOptions are the inputs of `vcs account update`.
type UpdateOptions struct {
	IO        *iostreams.IOStreams
	APIClient apiClientFunc
	Output    output.Options
	ID        int64
	Input     api.AccountInput
}

func newCmdUpdate(f *cmdutil.Factory, pick apiClientFunc, runF func(context.Context, *UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IOStreams, APIClient: pick}
	var fl fields
	var changePassword bool
	cmd := &cobra.Command{
		Use:   "update ACCOUNT_ID [flags]",
		Short: "Change an account",
		Long: `Change the members given as flags (or in -f); the others stay as they are. An empty
--email or --phone clears it. --change-password asks for a new password; --password-stdin
reads it.`,
		Example: `  vcs account update 5 --phone "+1 813 555 0100"
  vcs account update 5 --change-password`,
		Args: cmdutil.ExactArgs(1, "give the account id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			// Checked here rather than with MarkFlagsMutuallyExclusive, whose error cobra
			// returns unwrapped: exit code 1 instead of the usage error's 2.
			if changePassword && fl.passwordStdin {
				return cmdutil.FlagErrorf("--change-password and --password-stdin cannot be used together")
			}
			in, err := fl.input(cmd, opts.IO.In)
			if err != nil {
				return err
			}
			if changePassword {
				pw, err := askPassword(opts.IO)
				if err != nil {
					return err
				}
				in.Password = api.Some(pw)
			}
			if in == (api.AccountInput{}) {
				return cmdutil.FlagErrorf("nothing to change: give a member flag, --change-password, --password-stdin or -f")
			}
			opts.ID, opts.Input = id, in
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return updateRun(cmd.Context(), opts)
		},
	}
	fl.add(cmd)
	cmd.Flags().BoolVar(&changePassword, "change-password", false, "ask for a new password")
	opts.Output.AddFlags(cmd)
	return cmd
}

func updateRun(ctx context.Context, opts *UpdateOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	a, err := c.UpdateAccount(ctx, opts.ID, opts.Input)
	if err != nil {
		return fmt.Errorf("update account %d: %w", opts.ID, err)
	}
	return printAccount(opts.IO, &opts.Output, a)
}

// DeleteOptions are the inputs of `vcs account delete`.
type DeleteOptions struct {
	IO        *iostreams.IOStreams
	APIClient apiClientFunc
	ID        int64
	Yes       bool
}

func newCmdDelete(f *cmdutil.Factory, pick apiClientFunc, runF func(context.Context, *DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, APIClient: pick}
	cmd := &cobra.Command{
		Use:   "delete ACCOUNT_ID",
		Short: "Delete an account with all its vehicles and data",
		Long:  "Delete an account for good: its vehicles, subscriptions and trips go with it, and its tokens stop working. On a terminal it asks first; elsewhere it needs --yes.",
		Args:  cmdutil.ExactArgs(1, "give the account id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if err := cmdutil.ConfirmDestructive(opts.IO, opts.Yes, fmt.Sprintf("Delete account %d with all its vehicles and data?", opts.ID)); err != nil {
		return err
	}
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	if err := c.DeleteAccount(ctx, opts.ID); err != nil {
		return fmt.Errorf("delete account %d: %w", opts.ID, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Deleted account %d\n", opts.ID)
	return nil
}
