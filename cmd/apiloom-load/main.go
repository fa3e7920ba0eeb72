package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		if err := runCompare(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	c := defaultConfig()
	fs := pflag.NewFlagSet("apiloom-load", pflag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: apiloom-load [flags] fanout|idle|list|baseline...\n       apiloom-load compare FILE.json...\n\n")
		fs.PrintDefaults()
	}
	c.addFlags(fs)
	_ = fs.Parse(os.Args[1:])
	scenarios := fs.Args()
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	r, err := run(ctx, &c, scenarios, stderrLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiloom-load:", err)
		os.Exit(2)
	}
	r.print(os.Stdout)
	if c.Out != "" {
		if err := r.write(c.Out); err != nil {
			fmt.Fprintln(os.Stderr, "apiloom-load:", err)
			os.Exit(2)
		}
	}
	if v := r.violations(); len(v) > 0 {
		fmt.Fprintln(os.Stderr, "apiloom-load: the server misbehaved:\n  "+strings.Join(v, "\n  "))
		os.Exit(1)
	}
}
