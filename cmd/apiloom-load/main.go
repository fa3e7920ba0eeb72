package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

func main() { os.Exit(runMain()) }

// runMain is main with an exit code, so that deferred calls (the CPU
// profile's end) run before the process exits.
func runMain() int {
	// Before any client-go code reads its gates: the informer scenario
	// sets them per round.
	installClientGates()
	if len(os.Args) > 1 && os.Args[1] == "charts" {
		if err := runCharts(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	}
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		if err := runCompare(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	}
	c := defaultConfig()
	fs := pflag.NewFlagSet("apiloom-load", pflag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: apiloom-load [flags] fanout|idle|list|floor|informer|baseline|stalled|rapidreset|admission|scale...\n       apiloom-load compare FILE.json...\n       apiloom-load charts --out DIR [LABEL=]FILE.json...\n\n")
		fs.PrintDefaults()
	}
	c.addFlags(fs)
	_ = fs.Parse(os.Args[1:])
	scenarios := fs.Args()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if c.SelfProfile != "" {
		f, err := os.Create(c.SelfProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "apiloom-load:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	r, err := run(ctx, &c, scenarios, stderrLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-load:", err)
		return 2
	}
	r.print(os.Stdout)
	if c.Out != "" {
		if err := r.write(c.Out); err != nil {
			fmt.Fprintln(os.Stderr, "apiloom-load:", err)
			return 2
		}
	}
	if v := r.violations(); len(v) > 0 {
		fmt.Fprintln(os.Stderr, "apiloom-load: the server misbehaved:\n  "+strings.Join(v, "\n  "))
		return 1
	}
	return 0
}
