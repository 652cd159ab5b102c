package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
)

// maxInput bounds a -f file: the service refuses bodies over 1 MiB anyway.
const maxInput = api.MaxBodySize

// ReadJSONFile decodes the JSON object in path ("-" for stdin) into v, refusing unknown
// members so that a typo is an error here rather than a surprise at the service.
func ReadJSONFile(path string, stdin io.Reader, v any) error {
	var r io.Reader = stdin
	name := "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return &FlagError{Err: fmt.Errorf("-f: %w", err)}
		}
		defer f.Close()
		r, name = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxInput {
		return FlagErrorf("%s is larger than %d bytes", name, maxInput)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return FlagErrorf("%s: %v", name, err)
	}
	return nil
}

// OptionalString is a string flag as a request member: absent when the flag was not given,
// null when it was given empty (which clears the member), else its value.
func OptionalString(cmd *cobra.Command, flag, value string) api.Optional[string] {
	switch {
	case !cmd.Flags().Changed(flag):
		return api.Optional[string]{}
	case value == "":
		return api.Null[string]()
	}
	return api.Some(value)
}

// Merge returns flag when it was set, else base: flags override a -f file member by member.
func Merge[T any](base, flag api.Optional[T]) api.Optional[T] {
	if flag.Set {
		return flag
	}
	return base
}
