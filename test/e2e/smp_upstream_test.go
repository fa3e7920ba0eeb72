package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/server/testserver"
)

// peerEnv names a kubeconfig of a real kube-apiserver v1.37. With it set,
// TestStrategicMergePatchLikeKubeAPIServer sends every case to a ConfigMap
// there too and checks that kube-apiserver still answers what the table
// records, so the table is a differential test, not a guess.
const peerEnv = "APILOOM_PEER_KUBECONFIG"

// smpTarget is an object some server answers strategic merge patches for.
type smpTarget struct {
	rc       *rest.RESTClient
	base     string // the collection's path
	resource string // how Status messages name it: "configmaps", "databases.example.apiloom.dev"
	body     func(name string) string
}

// smpStart are the metadata every case starts from. ObjectMeta is the
// same Go type, with the same patch strategies (finalizers merge as a set,
// ownerReferences by uid), in a ConfigMap and in a Database, so its
// answers can be compared across the two servers.
const smpStart = `"labels":{"a":"1","b":"2"},"finalizers":["example.com/f1","example.com/f2"],` +
	`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o1","uid":"u1"},{"apiVersion":"v1","kind":"ConfigMap","name":"o2","uid":"u2"}]`

// smpAnswer is what a server answered a strategic merge patch.
type smpAnswer struct {
	code     int
	reason   metav1.StatusReason
	message  string
	meta     smpMeta
	warnings []string
}

// smpMeta is the part of the patched object's metadata the cases change.
type smpMeta struct {
	Labels          map[string]string `json:"labels"`
	Finalizers      []string          `json:"finalizers"`
	OwnerReferences []struct {
		UID string `json:"uid"`
	} `json:"ownerReferences"`
}

func (m smpMeta) String() string {
	var uids []string
	for _, o := range m.OwnerReferences {
		uids = append(uids, o.UID)
	}
	return fmt.Sprintf("labels=%v finalizers=%v owners=%v", m.Labels, m.Finalizers, uids)
}

// create makes a fresh object named name.
func (s smpTarget) create(t *testing.T, name string) {
	t.Helper()
	res := s.rc.Post().AbsPath(s.base).SetHeader("Content-Type", "application/json").Body([]byte(s.body(name))).Do(t.Context())
	if err := res.Error(); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// patch sends a strategic merge patch to the object name.
func (s smpTarget) patch(t *testing.T, name, query, body string) smpAnswer {
	t.Helper()
	req := s.rc.Patch(types.StrategicMergePatchType).AbsPath(s.base, name).Body([]byte(body))
	for _, kv := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			req = req.Param(k, v)
		}
	}
	res := req.Do(t.Context())
	var a smpAnswer
	res.StatusCode(&a.code)
	raw, _ := res.Raw()
	for _, w := range res.Warnings() {
		a.warnings = append(a.warnings, w.Text)
	}
	if a.code != http.StatusOK {
		var st metav1.Status
		if err := json.Unmarshal(raw, &st); err != nil || st.Kind != "Status" {
			t.Fatalf("%d is not a Status: %v: %.300s", a.code, err, raw)
		}
		a.reason = st.Reason
		a.message = strings.NewReplacer(s.resource, "{resource}", name, "{name}").Replace(st.Message)
		return a
	}
	var obj struct {
		Metadata smpMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("response: %v: %.300s", err, raw)
	}
	a.meta = obj.Metadata
	return a
}

// restFor is an unversioned REST client for cfg, with every warning kept
// in the results rather than logged.
func restFor(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.WarningHandlerWithContext = rest.NoWarnings{}
	return restClient(t, c)
}

// peerTarget is a ConfigMap on the kube-apiserver peerEnv names, or nil.
func peerTarget(t *testing.T, ns string) *smpTarget {
	t.Helper()
	path := os.Getenv(peerEnv)
	if path == "" {
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("%s: %v", peerEnv, err)
	}
	rc := restFor(t, cfg)
	res := rc.Post().AbsPath("/api/v1/namespaces").SetHeader("Content-Type", "application/json").
		Body([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)).Do(t.Context())
	if err := res.Error(); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("peer namespace: %v", err)
	}
	return &smpTarget{
		rc: rc, base: "/api/v1/namespaces/" + ns + "/configmaps", resource: "configmaps",
		body: func(name string) string {
			return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `",` + smpStart + `},"data":{"k":"v"}}`
		},
	}
}

func TestStrategicMergePatchLikeKubeAPIServer(t *testing.T) {
	// No controllers, as the peer runs none: the objects' owner references
	// name owners that do not exist, which the garbage collector would
	// act on (deleting a case's object before its patch) while the
	// cases run.
	ts, _ := startServer(t, testserver.WithControllers())
	ns := fmt.Sprintf("smp-%d", os.Getpid())
	ts.CreateNamespaces(t, ns)
	ours := smpTarget{
		rc: restFor(t, ts.Config), base: "/apis/example.apiloom.dev/v1/namespaces/" + ns + "/databases",
		resource: "databases.example.apiloom.dev",
		body: func(name string) string {
			return `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"` + name + `",` + smpStart + `},"spec":{"engine":"postgres"}}`
		},
	}
	peer := peerTarget(t, ns)

	for i, tc := range smpUpstreamCases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("case%03d", i)
			ours.create(t, name)
			got := ours.patch(t, name, tc.query, tc.patch)
			if peer != nil {
				peer.create(t, name)
				up := peer.patch(t, name, tc.query, tc.patch)
				t.Logf("kube-apiserver: %d %q %q %s %q", up.code, up.reason, up.message, up.meta, up.warnings)
				if !reflect.DeepEqual(up, tc.want) {
					t.Errorf("kube-apiserver answers\n%+v\nthe table records\n%+v", up, tc.want)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("apiloom answers\n%+v\nkube-apiserver answers\n%+v", got, tc.want)
			}
		})
	}
}
