// apiserver-gen writes the server side of apiloom's API packages: for each
// apis/<group>/<version> package with +genclient types, a package of
// resource.Definitions stating each type's facts, plus one Install that
// registers them all. See package generators for what is emitted.
package main

import (
	"flag"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/args"
	"github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/generators"
)

func main() {
	klog.InitFlags(nil)
	a := args.New()

	a.AddFlags(pflag.CommandLine)
	_ = flag.Set("logtostderr", "true")
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()

	if err := generators.Run(a, pflag.Args()); err != nil {
		klog.ErrorS(err, "apiserver-gen failed")
		klog.Flush()
		os.Exit(1)
	}
	klog.V(2).Info("completed successfully")
}
