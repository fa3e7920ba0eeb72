package endpoints

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestBackendRefusalStatus: what a client sees when the backend refuses a
// request (kine's "etcdserver: unsupported operations in txn request",
// "limit is not implemented by kine") or answers outside etcd's API: a 500
// InternalError whose message names the operation, the object or key
// range, and quotes the backend. kube-apiserver answers such errors with
// 500 and the backend's text alone (reason empty; its handlers'
// ErrorToAPIStatus for errors that are not Statuses); never a 404, 409 or
// a success.
func TestBackendRefusalStatus(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/backend-refusal")
	kv := &storagetest.FaultyKV{KV: c.KV}
	c.KV = kv
	wdef := validatedWidgets(storagetest.Definition())
	prefix := storage.ResourcePrefix("/registry", &wdef.Info)
	srv := httptest.NewServer(NewHandler(NewResource(wdef, storage.New(c, prefix, wdef), WithTypeConverter(testTypeConverter(t)))))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	a := e.createWidget("ns", "a", "blue")

	errTxn, errRead := storagetest.ErrKineTxn, storagetest.ErrKineRead
	a.Spec.Color = "red"
	update, _ := json.Marshal(a)
	b, _ := json.Marshal(storagetest.NewWidget("", "b", "blue"))
	for _, tc := range []struct {
		name           string
		txnErr, getErr error
		mangle         func(*clientv3.TxnResponse)
		method, path   string
		body           string
		want           []string // in the message
	}{
		{"create refused", errTxn, nil, nil, "POST", widgetsPath + "ns/widgets", string(b),
			[]string{`etcd create "ns/b"`, "unsupported operations in txn request"}},
		{"update refused", errTxn, nil, nil, "PUT", widgetsPath + "ns/widgets/a", string(update),
			[]string{`etcd update "ns/a"`, "unsupported operations in txn request"}},
		{"delete refused", errTxn, nil, nil, "DELETE", widgetsPath + "ns/widgets/a", "",
			[]string{`etcd delete "ns/a"`, "unsupported operations in txn request"}},
		{"get refused", nil, errRead, nil, "GET", widgetsPath + "ns/widgets/a", "",
			[]string{`etcd get "ns/a"`, "not implemented by kine"}},
		{"list refused", nil, errRead, nil, "GET", widgetsPath + "ns/widgets", "",
			[]string{`etcd list "` + prefix + `ns/`, "not implemented by kine"}},
		{"update without else", nil, nil, storagetest.DropElse, "PUT", widgetsPath + "ns/widgets/a", string(update),
			[]string{"response outside etcd's API contract", `"ns/a"`, "update:"}},
		{"delete without else", nil, nil, storagetest.DropElse, "DELETE", widgetsPath + "ns/widgets/a", "",
			[]string{"response outside etcd's API contract", `"ns/a"`, "delete:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv.Arm(tc.txnErr, tc.getErr, tc.mangle)
			defer kv.Arm(nil, nil, nil)
			e.t = t
			ct := ""
			if tc.body != "" {
				ct = "application/json"
			}
			st := e.do(tc.method, tc.path, ct, tc.body).wantStatus(t, http.StatusInternalServerError, metav1.StatusReasonInternalError, "")
			for _, w := range tc.want {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q does not contain %q", st.Message, w)
				}
			}
		})
	}
}
