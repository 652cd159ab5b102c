package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// ConfirmDestructive asks question on a terminal and returns ErrCancel unless the answer is
// yes. Without a terminal it cannot ask: it needs --yes, and says so.
func ConfirmDestructive(ios *iostreams.IOStreams, yes bool, question string) error {
	if yes {
		return nil
	}
	if !ios.CanPrompt() {
		return FlagErrorf("refusing to delete without confirmation: run again with --yes")
	}
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && line == "" {
		return ErrCancel
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrCancel
}

// ReadLine reads the first line of r without its line ending: a secret piped to a
// --*-stdin flag. Spaces are kept: they may belong to a password.
func ReadLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// PromptSecret asks for a secret on the terminal without echoing it. stdinFlag names the
// flag that reads it from standard input instead, for the error when there is no terminal.
func PromptSecret(ios *iostreams.IOStreams, prompt, stdinFlag string) (string, error) {
	f, ok := ios.In.(*os.File)
	if !ios.CanPrompt() || !ok {
		return "", FlagErrorf("a secret is needed and there is no terminal to ask on: pipe it in with %s", stdinFlag)
	}
	fmt.Fprint(ios.ErrOut, prompt)
	b, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(ios.ErrOut)
	if err != nil {
		return "", fmt.Errorf("read the secret: %w", err)
	}
	return string(b), nil
}
