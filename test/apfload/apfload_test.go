// Package apfload is issue 37's API Priority and Fairness scenario: a
// "noisy" user runs NOISY concurrent LISTs of OBJECTS ConfigMaps while a
// "quiet" user GETs one and the controller manager's user renews a
// Lease, against a server with APF and against one with only the
// max-in-flight limit. It prints the quiet user's p99, the renewals'
// success rate, and what the noisy user got (429s with Retry-After,
// timeouts), with ratios of APF to max-in-flight. make load runs it
// (hack/load.sh, SCENARIOS=apf); it is skipped unless APILOOM_APF_LOAD=1.
package apfload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/generated/apiserver"
	serverapi "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// result is one run's figures.
type result struct {
	quietP99, quietP50     time.Duration
	quietFailed, quietSent int
	renewOK, renewSent     int
	noisy429, noisyRA      int // 429s, of them with Retry-After
	noisyTimeouts, noisyOK int
}

func TestAPFLoad(t *testing.T) {
	if os.Getenv("APILOOM_APF_LOAD") != "1" {
		t.Skip("APILOOM_APF_LOAD=1 runs the APF load scenario (make load SCENARIOS=apf)")
	}
	objects, noisy := envInt("OBJECTS", 10000), envInt("NOISY", 200)
	dur := time.Duration(envInt("SECONDS", 30)) * time.Second
	runs := map[string]result{}
	for _, name := range []string{"max-in-flight", "apf"} {
		runs[name] = run(t, name == "apf", objects, noisy, dur)
		r := runs[name]
		t.Logf("%-13s quiet p50 %v p99 %v (%d/%d failed); renewals %d/%d ok; noisy %d ok, %d 429 (%d with Retry-After), %d timeouts",
			name, r.quietP50, r.quietP99, r.quietFailed, r.quietSent, r.renewOK, r.renewSent, r.noisyOK, r.noisy429, r.noisyRA, r.noisyTimeouts)
	}
	a, m := runs["apf"], runs["max-in-flight"]
	rate := func(r result) float64 { return float64(r.renewOK) / float64(max(r.renewSent, 1)) }
	fmt.Printf("apf-load objects=%d noisy=%d seconds=%v\n", objects, noisy, dur.Seconds())
	fmt.Printf("  quiet p99: apf %v, max-in-flight %v, ratio apf/max-in-flight %.3f\n", a.quietP99, m.quietP99, float64(a.quietP99)/float64(max(m.quietP99, 1)))
	fmt.Printf("  renewal success: apf %.3f, max-in-flight %.3f, ratio %.3f\n", rate(a), rate(m), rate(a)/max(rate(m), 1e-9))
	fmt.Printf("  noisy under apf: %d served, %d 429 (%d with Retry-After), %d timeouts\n", a.noisyOK, a.noisy429, a.noisyRA, a.noisyTimeouts)
}

func run(t *testing.T, apf bool, objects, noisy int, dur time.Duration) result {
	ts := testserver.Start(t, apiserver.Install, testserver.WithElection(false), testserver.WithControllers(),
		testserver.WithAuthorizationModes(serverapi.AuthorizationModeAlwaysAllow),
		testserver.Option(func(o *serverapi.Options) { o.EnablePriorityAndFairness = apf }))
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	ts.CreateNamespaces(t, "load")
	fill(t, admin, objects)
	if _, err := admin.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("kcm"), LeaseDurationSeconds: ptr.To[int32](15)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(user string, groups ...string) *rest.Config {
		c := rest.CopyConfig(ts.Config)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
		c.QPS, c.Burst = -1, 0
		c.Timeout = 60 * time.Second
		return c
	}
	var res result
	runCtx, stop := context.WithTimeout(ctx, dur)
	defer stop()
	var wg sync.WaitGroup

	// The noisy user: raw GETs so that a 429 is seen as it is, not
	// retried by client-go.
	noisyClient, err := rest.HTTPClientFor(as("noisy"))
	if err != nil {
		t.Fatal(err)
	}
	var ok, tooMany, withRA, timeouts atomic.Int64
	for range noisy {
		wg.Go(func() {
			for runCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(runCtx, http.MethodGet, ts.Config.Host+"/api/v1/namespaces/load/configmaps", nil)
				resp, err := noisyClient.Do(req)
				switch {
				case err != nil && runCtx.Err() == nil:
					timeouts.Add(1)
				case err != nil:
				case resp.StatusCode == http.StatusTooManyRequests:
					tooMany.Add(1)
					if resp.Header.Get("Retry-After") != "" {
						withRA.Add(1)
					}
					resp.Body.Close()
				case resp.StatusCode == http.StatusGatewayTimeout:
					timeouts.Add(1)
					resp.Body.Close()
				default:
					_, _ = ioDiscard(resp)
					ok.Add(1)
				}
			}
		})
	}
	// The quiet user: a GET of one object every 20ms.
	quiet := kubernetes.NewForConfigOrDie(as("quiet")).CoreV1().ConfigMaps("load")
	var lat []time.Duration
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for runCtx.Err() == nil {
			start := time.Now()
			_, err := quiet.Get(ctx, "cm-0", metav1.GetOptions{})
			res.quietSent++
			if err != nil {
				res.quietFailed++
			}
			lat = append(lat, time.Since(start))
			select {
			case <-runCtx.Done():
			case <-tick.C:
			}
		}
	})
	// The renewals: kube-controller-manager's user updates its Lease every
	// 200ms; one succeeds when it is answered within the 2s leader
	// election allows a retry (its RetryPeriod).
	leases := kubernetes.NewForConfigOrDie(as("system:kube-controller-manager")).CoordinationV1().Leases("kube-system")
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for runCtx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			l, err := leases.Get(rctx, "kube-controller-manager", metav1.GetOptions{})
			if err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, err = leases.Update(rctx, l, metav1.UpdateOptions{})
			}
			cancel()
			res.renewSent++
			if err == nil {
				res.renewOK++
			}
			select {
			case <-runCtx.Done():
			case <-tick.C:
			}
		}
	})
	wg.Wait()
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		res.quietP50, res.quietP99 = lat[n/2], lat[min(n*99/100, n-1)]
	}
	res.noisyOK, res.noisy429, res.noisyRA, res.noisyTimeouts = int(ok.Load()), int(tooMany.Load()), int(withRA.Load()), int(timeouts.Load())
	return res
}

// fill creates n ConfigMaps of about 1 kB in namespace load, 16 at once.
func fill(t *testing.T, cs kubernetes.Interface, n int) {
	t.Helper()
	payload := strings.Repeat("x", 900)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	next := atomic.Int64{}
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"x": payload}}
				if _, err := cs.CoreV1().ConfigMaps("load").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(slices.Collect(chanSeq(errs))...); err != nil {
		t.Fatal(err)
	}
}
