// Command loom starts a project of your own on apiloom, as kubebuilder
// does for controllers: `loom init` writes a new Go module whose server is
// apiloom with your generated registry, and `loom create api` adds a kind
// to it.
//
//	mkdir shop && cd shop
//	loom init --module example.com/shop --apiloom ~/src/apiloom
//	go tool loom create api --group shop.example.com --version v1 --kind Order
//	make generate && make run
//	make manifests image && kubectl apply -f deploy/
//
// Bad input (a non-empty directory without --force, an invalid module
// path, group, version or kind, a kind that exists) is refused with a
// one-line error naming the rule and exit status 2, before any file is
// written: everything is checked first.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loom:", err)
		os.Exit(1)
	}
	code := run(ctx, wd, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `loom starts and grows a project of your own on apiloom.

  loom init --module PATH [--apiloom DIR] [--force]
      write a new module into the current (empty) directory
  loom create api --group GROUP --version VERSION --kind KIND [--namespaced=false]
      add a kind to the module in the current directory
  loom manifests [--namespace NS] [--image IMAGE] [--name NAME] [--storage-size SIZE]
      write deploy/: the server behind a cluster's aggregation layer, one
      APIService per group version of apis/ (make manifests runs it)

Run a command with --help for its flags.
`

// errUsage is a refusal of the command line: exit status 2.
var errUsage = errors.New("loom")

// usageErrorf returns a one-line refusal wrapping errUsage.
func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// run is loom with args, in directory dir; it returns the exit status: 0,
// 2 for bad input (nothing written), 1 for a failure after writing began.
func run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) >= 1 && args[0] == "init":
		err = runInit(ctx, dir, args[1:], stdout, stderr)
	case len(args) >= 2 && args[0] == "create" && args[1] == "api":
		err = runCreateAPI(dir, args[2:], stdout, stderr)
	case len(args) >= 1 && args[0] == "manifests":
		err = runManifests(dir, args[1:], stdout, stderr, time.Now())
	case len(args) >= 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help"):
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	default:
		fmt.Fprintln(stderr, "loom:", err)
		return 1
	}
}
