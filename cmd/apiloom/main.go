// Command apiloom serves every resource generated from apis/ with embedded
// etcd by default:
//
//	apiloom --data-dir .apiloom
//	kubectl --kubeconfig .apiloom/kubeconfig get databases
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/generated/apiserver"
	serverpkg "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/registry"
)

func main() {
	opts := serverpkg.DefaultOptions()
	fs := pflag.NewFlagSet("apiloom", pflag.ExitOnError)
	opts.AddFlags(fs)
	verbose := fs.Bool("v", false, "debug logging")
	_ = fs.Parse(os.Args[1:])

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	reg := &registry.Registry{}
	apiserver.Install(reg)
	srv, err := serverpkg.New(opts, reg, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiloom:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil {
		log.Error("apiloom stopped", "err", err)
		os.Exit(1)
	}
}
