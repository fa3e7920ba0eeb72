package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

// TestBadInputGetsStatusAndChangesNothing sends malformed requests over the
// wire and checks each gets a metav1.Status with the right code and reason
// while the stored object stays as it was.
func TestBadInputGetsStatusAndChangesNothing(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	db := newDatabase("orders")
	// Lists for strategic merge patches to merge into.
	db.Finalizers = []string{"example.com/keep"}
	db.Spec.Users = []examplev1.DatabaseUser{{Name: "app", Privilege: "read"}}
	before, err := dbs.Create(ctx, db, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: tlsConfig(t, ts, "h2", "http/1.1"), ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	base := ts.Config.Host + "/apis/example.apiloom.dev/v1/namespaces/shop/databases"

	// A few hundred bytes that double a list 40 times (kube-apiserver caps
	// the copies at 3 MiB), and an object under the body limit but over
	// etcd's request limit.
	bomb := `[{"op":"add","path":"/spec/tags","value":["xxxxxxxxxx"]}` +
		strings.Repeat(`,{"op":"copy","from":"/spec/tags","path":"/spec/tags/-"}`, 40) + `]`
	overEtcd := `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"big"},"spec":{"engine":"mysql","region":"` + strings.Repeat("x", 2<<20) + `"}}`
	huge := `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"huge"},"spec":{"engine":"` + strings.Repeat("x", 4<<20) + `"}}`
	// 50,000 finalizers, to merge into the object's one.
	smpBomb := `{"metadata":{"finalizers":["example.com/f"` + strings.Repeat(`,"example.com/g"`, 50000) + `]}}`
	for _, tc := range []struct {
		name, method, url, contentType, body string
		code                                 int
		reason                               metav1.StatusReason
	}{
		{"malformed json", "POST", base, "application/json", `{"apiVersion":`, 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "POST", base, "application/json", `{"apiVersion":"example.apiloom.dev/v1","kind":"Region","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong group version", "POST", base, "application/json", `{"apiVersion":"other.dev/v1","kind":"Database","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"bad label selector", "GET", base + "?labelSelector=a%20in%20(", "", "", 400, metav1.StatusReasonBadRequest},
		{"unsupported field selector", "GET", base + "?fieldSelector=spec.nothing%3Dx", "", "", 400, metav1.StatusReasonBadRequest},
		{"bad continue token", "GET", base + "?limit=1&continue=garbage", "", "", 400, metav1.StatusReasonBadRequest},
		{"json patch copy bomb", "PATCH", base + "/orders", "application/json-patch+json", bomb, 422, metav1.StatusReasonInvalid},
		{"object over etcd's request limit", "POST", base, "application/json", overEtcd, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"oversized body", "PUT", base + "/orders", "application/json", huge, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"strategic merge patch of a non-object", "PATCH", base + "/orders", "application/strategic-merge-patch+json", `[{"spec":{}}]`, 400, metav1.StatusReasonBadRequest},
		{"strategic merge patch of a malformed directive", "PATCH", base + "/orders", "application/strategic-merge-patch+json", `{"spec":{"$retainKeys":"engine"}}`, 400, metav1.StatusReasonBadRequest},
		// kube-apiserver answers strategicpatch's unclassified errors so.
		{"strategic merge patch of an unknown directive", "PATCH", base + "/orders", "application/strategic-merge-patch+json", `{"spec":{"$patch":"bogus"}}`, 500, ""},
		// kube-apiserver resets the stream (the library panics).
		{"strategic merge patch with an object for a merge key", "PATCH", base + "/orders", "application/strategic-merge-patch+json", `{"spec":{"users":[{"name":{}}]}}`, 400, metav1.StatusReasonBadRequest},
		{"strategic merge patch of the wrong type", "PATCH", base + "/orders", "application/strategic-merge-patch+json", `{"spec":{"users":{"name":"x"}}}`, 422, metav1.StatusReasonInvalid},
		// A 1 MiB patch that would keep kube-apiserver busy for minutes
		// (--strategic-merge-patch-max-list-elements).
		{"strategic merge patch of too long a list", "PATCH", base + "/orders", "application/strategic-merge-patch+json", smpBomb, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"unknown patch type", "PATCH", base + "/orders", "application/x-nonsense", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"malformed merge patch", "PATCH", base + "/orders", "application/merge-patch+json", `{"spec":`, 400, metav1.StatusReasonBadRequest},
		{"update without resourceVersion", "PUT", base + "/orders", "application/json", `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"orders"},"spec":{"engine":"mysql"}}`, 422, metav1.StatusReasonInvalid},
		// As kube-apiserver: a strict create is a BadRequest, a strict patch Invalid.
		{"strict unknown field on create", "POST", base + "?fieldValidation=Strict", "application/json", `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"strict"},"spec":{"enginee":"mysql"}}`, 400, metav1.StatusReasonBadRequest},
		{"strict unknown field on patch", "PATCH", base + "/orders?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"enginee":"mysql"}}`, 422, metav1.StatusReasonInvalid},
		{"watch-list without NotOlderThan", "GET", base + "?watch=true&sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid},
		{"resourceVersionMatch without resourceVersion", "GET", base + "?resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid},
		{"method not allowed", "POST", base + "/orders", "application/json", `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"unknown resource", "GET", ts.Config.Host + "/apis/example.apiloom.dev/v1/namespaces/shop/nothings", "", "", 404, metav1.StatusReasonNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, tc.method, tc.url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
				t.Fatalf("%d, body is not a Status: %v %.300s", resp.StatusCode, err, body)
			}
			if resp.StatusCode != tc.code || int(st.Code) != tc.code || st.Reason != tc.reason {
				t.Fatalf("got %d %s (status code %d), want %d %s: %s", resp.StatusCode, st.Reason, st.Code, tc.code, tc.reason, st.Message)
			}
		})
	}

	t.Run("bearer scheme in any case", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base, nil)
		req.Header.Set("Authorization", "bearer "+ts.Config.BearerToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("got %d, want 200", resp.StatusCode)
		}
	})

	t.Run("watch with a negative timeout ends at once", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"?watch=true&timeoutSeconds=-5", nil)
		req.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || len(body) != 0 {
			t.Fatalf("got %d %q %v, want 200 and no events", resp.StatusCode, body, err)
		}
	})

	t.Run("unauthenticated", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("got %d, want 401", resp.StatusCode)
		}
	})

	after, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(after.Spec, before.Spec) {
		t.Fatalf("bad input changed the object: before %s %+v, after %s %+v", before.ResourceVersion, before.Spec, after.ResourceVersion, after.Spec)
	}
	list, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("bad input created objects: %v %d", err, len(list.Items))
	}
}
