package e2e

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/server/testserver"
)

// TestAPFBootstrapConfiguration: upstream's mandatory and suggested
// FlowSchemas and PriorityLevelConfigurations are created, a deleted
// mandatory one comes back, the controller writes their status, and
// responses name the schema and level that classified them.
func TestAPFBootstrapConfiguration(t *testing.T) {
	ts, _ := startServer(t, testserver.WithElection(false))
	fc := kubernetes.NewForConfigOrDie(ts.Config).FlowcontrolV1()
	for _, want := range append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...) {
		eventually(t, "FlowSchema "+want.Name, func(ctx context.Context) (bool, error) {
			got, err := fc.FlowSchemas().Get(ctx, want.Name, metav1.GetOptions{})
			return err == nil && got.Spec.PriorityLevelConfiguration.Name == want.Spec.PriorityLevelConfiguration.Name, err
		})
	}
	for _, want := range append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...), bootstrap.SuggestedPriorityLevelConfigurations...) {
		eventually(t, "PriorityLevelConfiguration "+want.Name, func(ctx context.Context) (bool, error) {
			_, err := fc.PriorityLevelConfigurations().Get(ctx, want.Name, metav1.GetOptions{})
			return err == nil, err
		})
	}

	old, err := fc.FlowSchemas().Get(t.Context(), flowcontrolv1.FlowSchemaNameCatchAll, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fc.FlowSchemas().Delete(t.Context(), old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted catch-all FlowSchema to come back", func(ctx context.Context) (bool, error) {
		got, err := fc.FlowSchemas().Get(ctx, old.Name, metav1.GetOptions{})
		return err == nil && got.UID != old.UID, err
	})

	// A changed mandatory spec is refused, as upstream's validation does.
	plc, err := fc.PriorityLevelConfigurations().Get(t.Context(), flowcontrolv1.PriorityLevelConfigurationNameCatchAll, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plc.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
	if _, err := fc.PriorityLevelConfigurations().Update(t.Context(), plc, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("changing catch-all's spec: %v, want Invalid", err)
	}

	// The admin is in system:masters: the exempt schema and level.
	exempt, err := fc.FlowSchemas().Get(t.Context(), flowcontrolv1.FlowSchemaNameExempt, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exemptPL, err := fc.PriorityLevelConfigurations().Get(t.Context(), flowcontrolv1.PriorityLevelConfigurationNameExempt, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the X-Kubernetes-PF-* headers of the exempt objects", func(ctx context.Context) (bool, error) {
		resp, err := hc.Get(ts.Config.Host + "/api/v1/namespaces")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == string(exempt.UID) &&
			resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == string(exemptPL.UID), nil
	})
	eventually(t, "the controller's Dangling condition on a FlowSchema", func(ctx context.Context) (bool, error) {
		got, err := fc.FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) > 0 && got.Status.Conditions[0].Type == flowcontrolv1.FlowSchemaConditionDangling, err
	})

	for _, p := range []string{"dump_priority_levels", "dump_queues", "dump_requests"} {
		resp, err := hc.Get(ts.Config.Host + "/debug/api_priority_and_fairness/" + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
	if n := metric(t, ts.Config, "apiserver_flowcontrol_nominal_limit_seats"); n == 0 {
		t.Fatal("no apiserver_flowcontrol_nominal_limit_seats on /metrics")
	}
}

// TestAPFIsolatesAFloodingUser: a user matched by a FlowSchema into a
// level of a few seats and one short queue gets 429 with Retry-After when
// flooding, while another user's requests all succeed.
func TestAPFIsolatesAFloodingUser(t *testing.T) {
	ts, _ := startServer(t, testserver.WithElection(false))
	fc := kubernetes.NewForConfigOrDie(ts.Config).FlowcontrolV1()
	_, err := fc.PriorityLevelConfigurations().Create(t.Context(), &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fc.FlowSchemas().Create(t.Context(), &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "noisy"},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "tiny"},
			MatchingPrecedence: 500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "noisy"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
			}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	noisy, quiet := asUser(t, ts, "noisy"), asUser(t, ts, "quiet")
	noisyFS, err := fc.FlowSchemas().Get(t.Context(), "noisy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the noisy user's requests to be classified by its FlowSchema", func(ctx context.Context) (bool, error) {
		resp, err := noisy.Get(ts.Config.Host + "/version")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == string(noisyFS.UID), nil
	})

	// 64 goroutines of the noisy user against 3 seats and a queue of 1,
	// until one is turned away (bounded by the test's deadline).
	ctx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	var rejected atomic.Value // the first 429's Retry-After
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && rejected.Load() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.Config.Host+"/api/v1/namespaces", nil)
				resp, err := noisy.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					rejected.CompareAndSwap(nil, resp.Header.Get("Retry-After"))
				}
			}
		}()
	}
	quietFailures := 0
	for i := 0; rejected.Load() == nil && ctx.Err() == nil; i++ {
		resp, err := quiet.Get(ts.Config.Host + "/version")
		if err != nil || resp.StatusCode != http.StatusOK {
			quietFailures++
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	stop()
	wg.Wait()
	ra, _ := rejected.Load().(string)
	if ra == "" {
		t.Fatalf("no 429 with Retry-After for the noisy user (got %v)", rejected.Load())
	}
	if quietFailures > 0 {
		t.Fatalf("%d of the quiet user's requests failed during the flood", quietFailures)
	}
}

// asUser is an HTTP client of ts acting, through impersonation by the
// admin, as user name in system:authenticated.
func asUser(t *testing.T, ts *testserver.TestServer, name string) *http.Client {
	t.Helper()
	cfg := rest.CopyConfig(ts.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: []string{"system:authenticated"}}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
