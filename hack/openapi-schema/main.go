// Command openapi-schema prints the OpenAPI v2 document the server serves
// for every generated resource. hack/update-codegen.sh passes it to
// applyconfiguration-gen (--openapi-schema), so generated apply
// configurations and fake clientsets know each kind's structure.
package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/version"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/registry"
)

func main() {
	reg := &registry.Registry{}
	apiserver.Install(reg)
	d, err := discovery.New(reg.Infos(), reg.OpenAPIDefinitions(), version.Info{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi-schema:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(d.OpenAPIV2JSON()); err != nil {
		os.Exit(1)
	}
}
