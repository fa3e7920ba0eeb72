// apiloom-gen is `make generate`, for apiloom and for every module `loom
// init` writes: run in a module, it regenerates everything derived from its
// apis/ (see package pipeline). With --verify it changes nothing and fails
// when the generated code is stale.
//
//	go tool apiloom-gen            # regenerate
//	go tool apiloom-gen --verify   # fail if stale
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/codegen/pipeline"
)

func main() {
	var cfg pipeline.Config
	fs := pflag.NewFlagSet("apiloom-gen", pflag.ContinueOnError)
	verify := fs.Bool("verify", false, "change nothing; fail, listing the files, if generating would change any")
	fs.StringVar(&cfg.Root, "root", "", "the module's root (default: the nearest go.mod from the working directory up)")
	fs.StringVar(&cfg.APIsDir, "apis-dir", "apis", "the API packages' directory, <dir>/<group>/<version>, relative to the root")
	fs.StringVar(&cfg.OutputDir, "output-dir", "generated", "where clientset, listers, informers, apply configurations, OpenAPI and server wiring go, relative to the root (deleted and written anew)")
	fs.StringVar(&cfg.HeaderFile, "go-header-file", "", "the header of every generated file (default: hack/boilerplate.go.txt if the module has one, else none)")
	fs.StringVar(&cfg.BuiltinsFile, "builtins", "", "the built-in kinds to serve from k8s.io/api (default: builtin/apis.yaml if the module has one, else apiloom's); none for none")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	run := pipeline.Generate
	if *verify {
		run = pipeline.Verify
	}
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-gen:", err)
		os.Exit(1)
	}
	if *verify {
		fmt.Fprintln(os.Stderr, "apiloom-gen: generated code is fresh")
	}
}
