package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/registry"
)

// Main is the whole main function of a server binary: apiloom's own
// (cmd/apiloom) and the one `loom init` writes into a module, so that
// every apiloom server takes the same flags (--data-dir, --secure-port,
// --bind-address, ...) and writes its kubeconfig the same way. install is
// the generated registry's Install. It exits with Command's status.
func Main(name string, install func(*registry.Registry)) {
	// Handlers log with their request's context through the default
	// logger (a failed hook, ...): with its Audit-ID.
	slog.SetDefault(slog.New(WithAuditIDs(slog.NewTextHandler(os.Stderr, nil))))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Command(ctx, name, install, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// Command parses args as the server's flags, then serves the resources
// install registers until ctx ends. It returns the process's exit status:
// 0 after a clean shutdown (or --help), 2 for bad flags or options, 1 when
// the server fails.
//
// `<name> kubeconfig ...` instead writes a kubeconfig for a new user
// (kubeconfigCommand) to standard output or --out; `<name> snapshot ...`
// backs etcd up or restores it (snapshotCommand).
func Command(ctx context.Context, name string, install func(*registry.Registry), args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "kubeconfig" {
		return kubeconfigCommand(name, args[1:], os.Stdout, stderr)
	}
	if len(args) > 0 && args[0] == "snapshot" {
		return snapshotCommand(ctx, name, args[1:], os.Stdout, stderr)
	}
	opts := DefaultOptions()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	opts.AddFlags(fs)
	verbose := fs.Bool("v", false, "debug logging")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (--help lists the flags)\n", name, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q (every setting is a flag; --help lists them)\n", name, fs.Args())
		return 2
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(WithAuditIDs(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))

	reg := &registry.Registry{}
	install(reg)
	srv, err := New(opts, reg, log)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if err := srv.Run(ctx); err != nil {
		log.Error(name+" stopped", "err", err)
		return 1
	}
	return 0
}
