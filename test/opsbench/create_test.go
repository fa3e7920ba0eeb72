package opsbench

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

const namespace = "bench"

// configuration is one server set-up to measure: options returns the
// test server's options (it may write files into b.TempDir()).
type configuration struct {
	name    string
	options func(b *testing.B) []testserver.Option
}

// configurations are measured in order; "off" is first and is the
// baseline of every ratio. Each feature's file appends its own.
var configurations = []configuration{
	{name: "off", options: func(*testing.B) []testserver.Option { return nil }},
}

// payload is a Secret's data: ~1 KiB, the size the other benchmarks use.
var payload = []byte(strings.Repeat("0123456789abcdef", 64))

// BenchmarkCreate times one create of a 1 KiB Secret per op in each
// configuration, each on its own server started before its timer, and
// reports ns/op and the process's CPU per op as ratios to "off"'s
// ("x-off", "cpu-x-off").
func BenchmarkCreate(b *testing.B) {
	var off, offCPU float64
	// "off" once more at the end shows how far the machine drifted
	// during the run: a ratio nearer 1 than off-again's is noise.
	for _, c := range append(configurations, configuration{name: "off-again", options: configurations[0].options}) {
		b.Run(c.name, func(b *testing.B) {
			// Secrets in plaintext unless the configuration says otherwise
			// (its options come after): "off" is encryption off, not the
			// embedded etcd's default secretbox.
			opts := append([]testserver.Option{plaintextSecrets(b)}, c.options(b)...)
			ts := testserver.Start(b, apiserver.Install, opts...)
			ts.CreateNamespaces(b, namespace)
			secrets := kubernetes.NewForConfigOrDie(ts.Config).CoreV1().Secrets(namespace)
			ctx := b.Context()
			seq := 0
			create := func() {
				seq++
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%07d", seq)}, Data: map[string][]byte{"key": payload}}
				if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			// Untimed: connections and caches warm.
			for range warmup {
				create()
			}
			b.ReportAllocs()
			cpu := processCPU(b)
			b.ResetTimer()
			for b.Loop() {
				create()
			}
			b.StopTimer()
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			cpuPerOp := float64(processCPU(b)-cpu) / float64(b.N)
			if c.name == "off" {
				off, offCPU = perOp, cpuPerOp
			}
			b.ReportMetric(cpuPerOp, "cpu-ns/op")
			if off > 0 {
				b.ReportMetric(perOp/off, "x-off")
				b.ReportMetric(cpuPerOp/offCPU, "cpu-x-off")
			}
		})
	}
}

// warmup is how many creates precede each timed run.
const warmup = 50

// processCPU is the CPU time this process (client and server) has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
