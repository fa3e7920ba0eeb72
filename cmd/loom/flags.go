package main

import (
	"errors"
	"io"

	"github.com/spf13/pflag"
)

// errHelp ends a command that printed its help: exit status 0.
var errHelp = errors.New("loom: help")

// parse parses args into fs, turning pflag's errors into refusals.
func parse(fs *pflag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usageErrorf("%v (--help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q: every input is a flag (--help lists them)", fs.Args())
	}
	return nil
}
