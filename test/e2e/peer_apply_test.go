package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestApplyMatchesKubeAPIServer sends the same server-side applies and
// writes to apiloom and to a real kube-apiserver serving CRDs that mirror
// the example kinds (testdata/peer-crds.yaml: same schema, defaults, list
// types, status subresource), and requires the same answers: status code,
// body (but for uids, times and resourceVersions) and warnings. It runs
// only when APILOOM_PEER_KUBECONFIG names such a server (a kube-apiserver
// v1.37 with its etcd; the CRDs are applied here).
//
// Typed Go kinds differ from CRDs in one way the comparison allows for:
// a struct such as spec always exists, so managed fields never own it
// ("." under f:spec), as for kube-apiserver's built-in kinds.
func TestApplyMatchesKubeAPIServer(t *testing.T) {
	path := os.Getenv("APILOOM_PEER_KUBECONFIG")
	if path == "" {
		t.Skip("APILOOM_PEER_KUBECONFIG is not set")
	}
	peerCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	installPeerCRDs(t, peerCfg)
	ts, _ := startServer(t)
	ns := "ssa-" + rand.String(6)
	ts.CreateNamespaces(t, ns)
	if _, err := kubernetes.NewForConfigOrDie(peerCfg).CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	peer, ours := newRawClient(t, peerCfg), newRawClient(t, ts.Config)

	region := "r-" + ns
	db := "/apis/example.apiloom.dev/v1/namespaces/" + ns + "/databases"
	rg := "/apis/example.apiloom.dev/v1/regions"
	cfg := func(name, rest string) string {
		return "apiVersion: example.apiloom.dev/v1\nkind: Database\nmetadata: {name: " + name + "}\n" + rest
	}
	const ap, mp, jp = "application/apply-patch+yaml", "application/merge-patch+json", "application/json-patch+json"
	cond := func(typ string) string {
		return `{type: ` + typ + `, status: "True", reason: R, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}`
	}
	steps := []rawRequest{
		{"apply without fieldManager", "PATCH", db + "/d1", ap, cfg("d1", "spec: {engine: postgres}"), ""},
		{"apply creates", "PATCH", db + "/d1?fieldManager=alice", ap, cfg("d1", "spec: {engine: postgres, version: \"16\", replicas: 3}\nstatus: {phase: Ready}"), ""},
		{"conflict", "PATCH", db + "/d1?fieldManager=bob", ap, cfg("d1", "spec: {replicas: 4, engine: mysql}"), ""},
		{"force", "PATCH", db + "/d1?fieldManager=bob&force=true", ap, cfg("d1", "spec: {replicas: 4}"), ""},
		{"shared value", "PATCH", db + "/d1?fieldManager=carol", ap, cfg("d1", "spec: {replicas: 4}"), ""},
		{"applier drops a field", "PATCH", db + "/d1?fieldManager=alice", ap, cfg("d1", "spec: {engine: postgres}"), ""},
		{"status apply", "PATCH", db + "/d1/status?fieldManager=ctl", ap, cfg("d1", "spec: {replicas: 7}\nstatus: {phase: Ready, conditions: ["+cond("Ready")+"]}"), ""},
		{"status apply, other condition", "PATCH", db + "/d1/status?fieldManager=ctl2", ap, cfg("d1", "status: {conditions: ["+cond("Synced")+"]}"), ""},
		{"status applier drops its condition", "PATCH", db + "/d1/status?fieldManager=ctl", ap, cfg("d1", "status: {phase: Ready}"), ""},
		{"status conflict", "PATCH", db + "/d1/status?fieldManager=ctl2", ap, cfg("d1", "status: {phase: Failed}"), ""},
		{"merge patch by User-Agent", "PATCH", db + "/d1", mp, `{"spec":{"region":"eu"}}`, "kubectl-edit/v1.37.1 (linux/amd64)"},
		{"JSON patch by nobody", "PATCH", db + "/d1", jp, `[{"op":"replace","path":"/spec/region","value":"us"}]`, "-"},
		{"status patch ignores managed fields", "PATCH", db + "/d1/status", mp, `{"metadata":{"managedFields":[{"manager":"x","operation":"Apply","apiVersion":"example.apiloom.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},"status":{"endpoint":"h:1"}}`, "st/1"},
		{"unparsable managed fields", "PATCH", db + "/d1", mp, `{"metadata":{"managedFields":[{"manager":"x","operation":"Bogus"}]}}`, ""},
		{"managed fields written", "PATCH", db + "/d1", mp, `{"metadata":{"labels":{"k":"v"},"managedFields":[{"manager":"x","operation":"Apply","apiVersion":"example.apiloom.dev/v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:engine":{}}}}]}}`, ""},
		{"x re-applies with a status", "PATCH", db + "/d1?fieldManager=x", ap, cfg("d1", "spec: {engine: postgres}\nstatus: {phase: Failed}"), ""},
		{"managed fields cleared", "PATCH", db + "/d1", mp, `{"metadata":{"managedFields":[{}]}}`, ""},
		{"update of an untracked object", "PATCH", db + "/d1", mp, `{"spec":{"region":"ap"}}`, ""},
		{"apply after the reset", "PATCH", db + "/d1?fieldManager=alice&force=true", ap, cfg("d1", "spec: {engine: postgres, replicas: 2}"), ""},
		{"duplicate field, Warn", "PATCH", db + "/d1?fieldManager=alice", ap, cfg("d1", "spec: {engine: postgres, replicas: 3, replicas: 2}"), ""},
		{"duplicate field, Strict", "PATCH", db + "/d1?fieldManager=alice&fieldValidation=Strict", ap, cfg("d1", "spec: {engine: postgres, replicas: 2, replicas: 3}"), ""},
		{"malformed JSON", "PATCH", db + "/d1?fieldManager=a", ap, "{{{", ""},
		{"malformed YAML", "PATCH", db + "/d1?fieldManager=a", ap, "a: [", ""},
		{"a list", "PATCH", db + "/d1?fieldManager=a", ap, "[]", ""},
		{"null", "PATCH", db + "/d1?fieldManager=a", ap, "null", ""},
		{"another version", "PATCH", db + "/d1?fieldManager=a", ap, "apiVersion: example.apiloom.dev/v2\nkind: Database\nmetadata: {name: d1}", ""},
		{"another kind", "PATCH", db + "/d1?fieldManager=a", ap, "apiVersion: example.apiloom.dev/v1\nkind: Region\nmetadata: {name: d1}", ""},
		{"another name", "PATCH", db + "/d1?fieldManager=a", ap, cfg("d2", ""), ""},
		{"another namespace", "PATCH", db + "/d1?fieldManager=a", ap, cfg("d1", "metadata: {name: d1, namespace: elsewhere}"), ""},
		{"managed fields in the configuration", "PATCH", db + "/d1?fieldManager=a", ap, cfg("d1", "metadata: {name: d1, managedFields: []}"), ""},
		{"undeclared field", "PATCH", db + "/d1?fieldManager=a", ap, cfg("d1", "spec: {engine: postgres, bogus: 1}"), ""},
		{"wrong type", "PATCH", db + "/d1?fieldManager=a", ap, cfg("d1", "spec: {engine: postgres, replicas: many}"), ""},
		{"stale resourceVersion", "PATCH", db + "/d1?fieldManager=alice", ap, cfg("d1", "metadata: {name: d1, resourceVersion: \"1\"}\nspec: {engine: postgres}"), ""},
		{"force on a merge patch", "PATCH", db + "/d1?force=true", mp, `{}`, ""},
		{"uid on a missing object", "PATCH", db + "/d9?fieldManager=a", ap, cfg("d9", "metadata: {name: d9, uid: abc}"), ""},
		{"status apply to a missing object", "PATCH", db + "/d9/status?fieldManager=a", ap, cfg("d9", "status: {phase: Ready}"), ""},
		{"no name on a missing object", "PATCH", db + "/d9?fieldManager=a", ap, "apiVersion: example.apiloom.dev/v1\nkind: Database\nspec: {engine: postgres}", ""},
		{"dry-run create", "PATCH", db + "/d8?fieldManager=alice&dryRun=All", ap, cfg("d8", "spec: {engine: mysql}"), ""},
		{"nothing was created", "GET", db + "/d8", "", "", ""},
		{"resourceVersion ignored on create", "PATCH", db + "/d7?fieldManager=alice", ap, cfg("d7", "metadata: {name: d7, resourceVersion: \"5\"}\nspec: {engine: mysql}"), ""},
		{"create without User-Agent", "POST", db, "application/json", `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"p2"},"spec":{"engine":"mysql","replicas":2}}`, "-"},
		{"apply with finalizers", "PATCH", db + "/f1?fieldManager=alice", ap, cfg("f1", "metadata: {name: f1, finalizers: [example.com/x]}\nspec: {engine: mysql}"), ""},
		{"delete with finalizers", "DELETE", db + "/f1", "", "", ""},
		{"apply while deleting", "PATCH", db + "/f1?fieldManager=alice", ap, cfg("f1", "metadata: {name: f1, finalizers: [example.com/x]}\nspec: {engine: mysql, replicas: 2}"), ""},
		{"apply removes the finalizer", "PATCH", db + "/f1?fieldManager=alice", ap, cfg("f1", "spec: {engine: mysql, replicas: 2}"), ""},
		{"gone", "GET", db + "/f1", "", "", ""},
		{"set, first manager", "PATCH", rg + "/" + region + "?fieldManager=a", ap, "apiVersion: example.apiloom.dev/v1\nkind: Region\nmetadata: {name: " + region + "}\nspec: {zones: [z1, z2]}", ""},
		{"set, second manager", "PATCH", rg + "/" + region + "?fieldManager=b", ap, "apiVersion: example.apiloom.dev/v1\nkind: Region\nmetadata: {name: " + region + "}\nspec: {zones: [z3, z2]}", ""},
		{"set, first drops its items", "PATCH", rg + "/" + region + "?fieldManager=a", ap, "apiVersion: example.apiloom.dev/v1\nkind: Region\nmetadata: {name: " + region + "}\nspec: {zones: [z1]}", ""},
		{"CBOR", "PATCH", rg + "/" + region + "?fieldManager=a", "application/apply-patch+cbor", "\xa0", ""},
	}
	for i := range 12 {
		steps = append(steps, rawRequest{fmt.Sprintf("update manager %d", i), "PATCH", db + "/d1", mp,
			fmt.Sprintf(`{"metadata":{"labels":{"m%d":"v"}}}`, i), fmt.Sprintf("m%d/1", i)})
	}
	steps = append(steps, rawRequest{"ten update managers at most", "GET", db + "/d1", "", "", ""})

	for _, s := range steps {
		p, o := peer.do(t, s), ours.do(t, s)
		if !reflect.DeepEqual(p, o) {
			t.Errorf("%s: kube-apiserver and apiloom differ:\n  kube-apiserver: %+v\n  apiloom:        %+v", s.name, p, o)
		}
	}
	dc := dynamic.NewForConfigOrDie(peerCfg)
	_ = dc.Resource(schema.GroupVersionResource{Group: "example.apiloom.dev", Version: "v1", Resource: "regions"}).Delete(context.WithoutCancel(t.Context()), region, metav1.DeleteOptions{})
	_ = kubernetes.NewForConfigOrDie(peerCfg).CoreV1().Namespaces().Delete(context.WithoutCancel(t.Context()), ns, metav1.DeleteOptions{})
}

// rawRequest is one request of the comparison. userAgent "" is the
// client's default, "-" none at all.
type rawRequest struct {
	name, method, path, contentType, body, userAgent string
}

// rawAnswer is a response as compared: the code, the body normalised and
// the warnings.
type rawAnswer struct {
	Code     int
	Body     any
	Warnings []string
}

type rawClient struct {
	host   string
	client *http.Client
}

func newRawClient(t *testing.T, cfg *rest.Config) *rawClient {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rawClient{host: strings.TrimSuffix(cfg.Host, "/"), client: c}
}

func (c *rawClient) do(t *testing.T, r rawRequest) rawAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), r.method, c.host+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	switch r.userAgent {
	case "":
		req.Header.Set("User-Agent", "e2e/1.0")
	case "-":
		req.Header.Set("User-Agent", "")
	default:
		req.Header.Set("User-Agent", r.userAgent)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := rawAnswer{Code: resp.StatusCode, Warnings: resp.Header.Values("Warning")}
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		a.Body = string(data)
		return a
	}
	a.Body = normalize(body, "")
	return a
}

// normalize drops what two servers cannot agree on (uids, times,
// resourceVersions, the order of managed fields entries written in the
// same second, an empty status apiloom's typed objects always have) and the
// ownership of the spec and status structs themselves, which typed kinds
// never record.
func normalize(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "uid", "creationTimestamp", "deletionTimestamp", "time", "resourceVersion":
				v[k] = "X"
				continue
			}
			if (key == "f:spec" || key == "f:status") && k == "." {
				delete(v, k)
				continue
			}
			if k == "status" && key == "" {
				if m, ok := e.(map[string]any); ok && len(m) == 0 {
					delete(v, k)
					continue
				}
			}
			v[k] = normalize(e, k)
		}
		if msg, ok := v["message"].(string); ok && key == "" {
			// "(namespace/name; gvk)": the namespace comes from the body.
			if i, j := strings.Index(msg, "failed to create typed patch object ("), strings.Index(msg, ";"); i >= 0 && j > i {
				v["message"] = msg[:i] + "failed to create typed patch object (X" + msg[j:]
			}
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = normalize(e, key)
		}
		if key == "managedFields" {
			slices.SortFunc(v, func(a, b any) int {
				return strings.Compare(fmt.Sprint(a.(map[string]any)["manager"]), fmt.Sprint(b.(map[string]any)["manager"]))
			})
		}
		return v
	}
	return v
}

// installPeerCRDs creates the CRDs that mirror the example kinds on the
// peer, if they are not there, and waits for them to be served.
func installPeerCRDs(t *testing.T, cfg *rest.Config) {
	t.Helper()
	data, err := os.ReadFile("testdata/peer-crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crds := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if _, err := crds.Apply(t.Context(), obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: "apiloom-e2e", Force: true}); err != nil {
			t.Fatal(err)
		}
		plural, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "plural")
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		served := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural})
		eventually(t, obj.GetName()+" to be served", func(ctx context.Context) (bool, error) {
			_, err := served.List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, err
		})
	}
}
