// Package suite is Kubernetes' own end-to-end tests (k8s.io/kubernetes
// test/e2e, the version go.mod names) compiled as one Ginkgo suite to run
// against apiloom: hack/conformance.sh builds it, starts a server and runs
// the tests listed in ../tests.txt.
//
// It registers the upstream test packages that hold the listed tests and
// the framework's per-test hooks, as upstream's test/e2e/e2e_test.go does,
// but not upstream's suite setup (test/e2e/e2e.go): that reads the Service
// default/kubernetes to learn the cluster's IP family and fails every test
// when it cannot, and apiloom serves no Services. Its other waits (for
// nodes, system pods, each namespace's ServiceAccount) are the framework's
// own, turned off by the flags hack/conformance.sh passes.
package suite

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"

	// Authentication plugins of client-go and the e2e framework's logging.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	_ "k8s.io/component-base/logs/testinit"

	// The feature and label constants the tests' names use.
	_ "k8s.io/kubernetes/test/e2e/feature"

	// The packages of the listed tests.
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/auth"
	_ "k8s.io/kubernetes/test/e2e/common/node"
	_ "k8s.io/kubernetes/test/e2e/instrumentation"

	// The framework's hooks, as upstream's e2e_test.go imports them.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/utils/ktesting/format"
)

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if args := flag.CommandLine.Args(); len(args) > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %q\n", args)
		os.Exit(2)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	logs.InitLogs()
	defer logs.FlushLogs()
	klog.EnableContextualLogging(true)
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "Kubernetes e2e suite against apiloom", suiteConfig, reporterConfig)
}

// The suite's setup: the server answers and says its version. The tests
// listed need no IP family; "ipv4" is what upstream assumes without one.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "loading the client")
	v, err := c.Discovery().ServerVersion()
	framework.ExpectNoError(err, "reading /version")
	framework.Logf("server version %s", v.GitVersion)
	return nil
}, func(ctx context.Context, _ []byte) {
	framework.TestContext.IPFamily = "ipv4"
})
