package apiserver

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestDefaultOptionsAreValid(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.DataDir != ".apiloom" || o.SecurePort != 6443 || !o.WatchCache || o.CompactionInterval != 5*time.Minute || o.HTTP2Server != HTTP2ServerApiloom {
		t.Fatalf("defaults changed: %+v", o)
	}
	// kube-apiserver's defaults for the same flags.
	if o.RequestTimeout != time.Minute || o.MaxRequestsInFlight != 400 || o.MaxMutatingRequestsInFlight != 200 || o.WatchWriteTimeout != time.Minute ||
		o.ConcurrentNamespaceSyncs != 10 {
		t.Fatalf("limits differ from kube-apiserver's defaults: %+v", o)
	}
}

func TestOptionsValidateReportsEveryProblem(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--data-dir=", "--bind-address=localhost", "--secure-port=70000",
		"--tls-cert-file=a.crt", "--etcd-cafile=ca.crt", "--etcd-prefix=registry",
		"--etcd-compaction-interval=-1s", "--request-timeout=-1s", "--max-requests-inflight=-1",
		"--max-mutating-requests-inflight=-1", "--watch-write-timeout=-1s", "--http2-server=nghttpd",
		"--concurrent-namespace-syncs=0", "--controllers=*,-replicaset",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = o.Validate()
	if err == nil {
		t.Fatal("invalid options accepted")
	}
	for _, want := range []string{"--data-dir", "--bind-address", "--secure-port", "--tls-cert-file", "--etcd-cafile", "--etcd-prefix", "--etcd-compaction-interval",
		"--request-timeout", "--max-requests-inflight", "--max-mutating-requests-inflight", "--watch-write-timeout", "--http2-server",
		"--concurrent-namespace-syncs", "--controllers"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}

func TestFlagsSetExternalEtcd(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--etcd-servers=https://10.0.0.1:2379,https://10.0.0.2:2379", "--etcd-certfile=c", "--etcd-keyfile=k", "--watch-cache=false"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(o.EtcdServers) != 2 || o.WatchCache {
		t.Fatalf("parsed %+v", o)
	}
}

func TestEtcdSpaceFlags(t *testing.T) {
	o := DefaultOptions()
	if o.EtcdMinFreeDiskBytes != DefaultEtcdMinFreeDiskBytes || o.EtcdQuotaBackendBytes != 0 {
		t.Fatalf("defaults: min free %d, quota %d", o.EtcdMinFreeDiskBytes, o.EtcdQuotaBackendBytes)
	}
	parse := func(args ...string) (Options, error) {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return o, o.Validate()
	}
	if o, err := parse("--etcd-quota-backend-bytes=33554432", "--etcd-min-free-disk-bytes=0"); err != nil || o.EtcdQuotaBackendBytes != 32<<20 || o.EtcdMinFreeDiskBytes != 0 {
		t.Fatalf("valid space flags: %+v, %v", o, err)
	}
	if o.EtcdDefragReclaimableBytes != 100<<20 || o.EtcdDefragReclaimablePercent != 45 {
		t.Fatalf("defrag defaults: %d bytes, %d%%", o.EtcdDefragReclaimableBytes, o.EtcdDefragReclaimablePercent)
	}
	o, err := parse("--etcd-defrag-reclaimable-bytes=0", "--etcd-defrag-reclaimable-percent=0")
	if err != nil || o.etcdConfig().DefragReclaimableBytes != 0 || o.etcdConfig().DefragReclaimablePercent != 0 {
		t.Fatalf("defrag off: %+v, %v", o.etcdConfig(), err)
	}
	if o, err := parse("--etcd-defrag-reclaimable-bytes=1048576", "--etcd-defrag-reclaimable-percent=60"); err != nil ||
		o.etcdConfig().DefragReclaimableBytes != 1<<20 || o.etcdConfig().DefragReclaimablePercent != 60 {
		t.Fatalf("defrag flags: %+v, %v", o.etcdConfig(), err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-quota-backend-bytes=-1"}, "--etcd-quota-backend-bytes"},
		{[]string{"--etcd-servers=https://10.0.0.1:2379", "--etcd-quota-backend-bytes=33554432"}, "embedded etcd only"},
		{[]string{"--etcd-min-free-disk-bytes=1048576"}, "--etcd-min-free-disk-bytes"},
		{[]string{"--etcd-min-free-disk-bytes=-1"}, "--etcd-min-free-disk-bytes"},
		{[]string{"--etcd-defrag-reclaimable-bytes=-1"}, "--etcd-defrag-reclaimable-bytes"},
		{[]string{"--etcd-defrag-reclaimable-percent=101"}, "--etcd-defrag-reclaimable-percent"},
		{[]string{"--etcd-defrag-reclaimable-percent=-1"}, "--etcd-defrag-reclaimable-percent"},
	} {
		if _, err := parse(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestControllersFlag: --controllers reads as kube-controller-manager's.
func TestControllersFlag(t *testing.T) {
	for _, tc := range []struct {
		flag   []string
		gc, ns bool
	}{
		{[]string{"*"}, true, true},
		{nil, false, false},
		{[]string{"*", "-garbagecollector"}, false, true},
		{[]string{"namespace"}, false, true},
		{[]string{"garbagecollector", "-garbagecollector"}, false, false},
	} {
		if gc, ns := controllerEnabled(tc.flag, controllerGC), controllerEnabled(tc.flag, controllerNamespace); gc != tc.gc || ns != tc.ns {
			t.Errorf("--controllers=%v: garbagecollector %v namespace %v, want %v %v", tc.flag, gc, ns, tc.gc, tc.ns)
		}
	}
}
