package rbac

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// allowed asks a whether req is allowed.
func allowed(t *testing.T, a *Authorizer, req authorizer.AttributesRecord) bool {
	t.Helper()
	d, _, err := a.Authorize(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d == authorizer.DecisionAllow
}

// TestFollowsChanges: objects created, changed and deleted after the
// first list reach the index through the watch: a binding that comes,
// a role whose rules change, a binding whose subjects change, and deletes.
func TestFollowsChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSources()
		a := runAuthorizer(t, s)
		alice := person("alice")
		get := request(alice, "get", "team", "", "pods", "", "p")
		if allowed(t, a, get) {
			t.Fatal("allowed before any binding")
		}

		s.add(t, role("team", "r", resourceRule(l("get"), l(""), l("pods"))), roleBinding("team", "b", "Role", "r", userSubject("alice")))
		synctest.Wait()
		if !allowed(t, a, get) {
			t.Fatal("not allowed after the role and binding came")
		}

		s.add(t, role("team", "r", resourceRule(l("list"), l(""), l("pods"))))
		synctest.Wait()
		if allowed(t, a, get) {
			t.Fatal("allowed after the role lost the verb")
		}

		s.add(t, role("team", "r", resourceRule(l("get"), l(""), l("pods"))),
			roleBinding("team", "b", "Role", "r", userSubject("bob")))
		synctest.Wait()
		if allowed(t, a, get) || !allowed(t, a, request(person("bob"), "get", "team", "", "pods", "", "p")) {
			t.Fatal("binding's new subject not followed")
		}

		s.add(t, clusterRole("c", urlRule(l("get"), l("/metrics"))), clusterRoleBinding("cb", "c", groupSubject("g")))
		synctest.Wait()
		metrics := urlRequest(person("x", "g"), "get", "/metrics")
		if !allowed(t, a, metrics) {
			t.Fatal("cluster binding not followed")
		}
		s.crbs.remove("", "cb")
		synctest.Wait()
		if allowed(t, a, metrics) {
			t.Fatal("allowed after the cluster binding was deleted")
		}
		s.roles.remove("team", "r")
		synctest.Wait()
		d, reason, _ := a.Authorize(t.Context(), request(person("bob"), "get", "team", "", "pods", "", "p"))
		if d != authorizer.DecisionNoOpinion || reason != `RBAC: role.rbac.authorization.k8s.io "r" not found` {
			t.Fatalf("after the role was deleted: %v %q", d, reason)
		}
	})
}

// TestRelistsWhenExpired: when a watch expires, the kind is listed again
// at once, and objects deleted meanwhile (whose DELETED the watcher never
// saw) leave the index; when the watch cannot even start again, the next
// list waits for the retry pause.
func TestRelistsWhenExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSources()
		s.add(t, clusterRole("c", urlRule(l("get"), l("/metrics"))), clusterRoleBinding("cb", "c", userSubject("alice")))
		a := runAuthorizer(t, s, WithRetryPause(time.Minute))
		metrics := urlRequest(person("alice"), "get", "/metrics")
		if !allowed(t, a, metrics) || s.crbs.listCount() != 1 {
			t.Fatalf("first list: allowed %v, lists %d", allowed(t, a, metrics), s.crbs.listCount())
		}

		// The delete and the compaction land before the watcher polls:
		// it sees only its end.
		s.crbs.mu.Lock()
		delete(s.crbs.objs, key{"", "cb"})
		s.crbs.log = append(s.crbs.log, s.crbs.log[len(s.crbs.log)-1]) // a revision the watcher never reads
		s.crbs.mu.Unlock()
		s.crbs.expire()
		synctest.Wait()
		if s.crbs.listCount() != 2 {
			t.Fatalf("lists after expiry: %d, want 2", s.crbs.listCount())
		}
		if allowed(t, a, metrics) {
			t.Fatal("allowed by a binding deleted while the watch was expired")
		}
		if !a.HasSynced() {
			t.Fatal("not synced")
		}
	})
}

// TestNoRelistLoop: a store whose watches cannot start (expired even
// from a fresh list) is listed again only after the retry pause, not in a
// loop.
func TestNoRelistLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSources()
		s.crbs.compacted = 1 << 40
		runAuthorizer(t, s, WithRetryPause(time.Minute))
		synctest.Wait()
		if n := s.crbs.listCount(); n != 1 {
			t.Fatalf("lists before the pause: %d, want 1", n)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := s.crbs.listCount(); n != 2 {
			t.Fatalf("lists after one pause: %d, want 2", n)
		}
	})
}

// TestRunStops: Run returns once its context ends, and WaitForSync gives
// up with the context's error when a kind never lists.
func TestRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSources()
		a := New(s.sources())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); a.Run(ctx) }()
		if err := a.WaitForSync(ctx); err != nil || !a.HasSynced() {
			t.Fatalf("WaitForSync: %v", err)
		}
		cancel()
		<-done

		never := New(Sources{})
		wctx, wcancel := context.WithTimeout(t.Context(), time.Second)
		defer wcancel()
		if err := never.WaitForSync(wctx); err != context.DeadlineExceeded || never.HasSynced() {
			t.Fatalf("WaitForSync of an authorizer never run: %v", err)
		}
	})
}
