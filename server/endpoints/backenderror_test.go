package endpoints

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// refusingKV is a clientv3.KV that, once armed, fails transactions with
// txnErr and reads with getErr, or empties the response of failed
// transactions: an etcd-API backend refusing what it does not implement
// (kine), or answering outside etcd's API.
type refusingKV struct {
	clientv3.KV

	mu     sync.Mutex // guards the fields below
	txnErr error
	getErr error
	noElse bool // a committed transaction comes back failed, without its Else get
}

func (k *refusingKV) arm(txnErr, getErr error, noElse bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.txnErr, k.getErr, k.noElse = txnErr, getErr, noElse
}

func (k *refusingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.mu.Lock()
	err := k.getErr
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return k.KV.Get(ctx, key, opts...)
}

func (k *refusingKV) Txn(ctx context.Context) clientv3.Txn {
	k.mu.Lock()
	defer k.mu.Unlock()
	return &refusingTxn{Txn: k.KV.Txn(ctx), err: k.txnErr, noElse: k.noElse}
}

type refusingTxn struct {
	clientv3.Txn
	err    error
	noElse bool
}

func (t *refusingTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *refusingTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *refusingTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *refusingTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.err != nil {
		return nil, t.err
	}
	resp, err := t.Txn.Commit()
	if err == nil && t.noElse {
		resp.Succeeded, resp.Responses = false, nil
	}
	return resp, err
}

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
	kv := &refusingKV{KV: c.KV}
	c.KV = kv
	wdef := validatedWidgets(storagetest.Definition())
	prefix := storage.ResourcePrefix("/registry", &wdef.Info)
	srv := httptest.NewServer(NewHandler(NewResource(wdef, storage.New(c, prefix, wdef), WithTypeConverter(testTypeConverter(t)))))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	a := e.createWidget("ns", "a", "blue")

	errTxn := status.New(codes.InvalidArgument, "etcdserver: unsupported operations in txn request").Err()
	errRead := status.New(codes.Unimplemented, "limit is not implemented by kine").Err()
	a.Spec.Color = "red"
	update, _ := json.Marshal(a)
	b, _ := json.Marshal(storagetest.NewWidget("", "b", "blue"))
	for _, tc := range []struct {
		name           string
		txnErr, getErr error
		noElse         bool
		method, path   string
		body           string
		want           []string // in the message
	}{
		{"create refused", errTxn, nil, false, "POST", widgetsPath + "ns/widgets", string(b),
			[]string{`etcd create "ns/b"`, "unsupported operations in txn request"}},
		{"update refused", errTxn, nil, false, "PUT", widgetsPath + "ns/widgets/a", string(update),
			[]string{`etcd update "ns/a"`, "unsupported operations in txn request"}},
		{"delete refused", errTxn, nil, false, "DELETE", widgetsPath + "ns/widgets/a", "",
			[]string{`etcd delete "ns/a"`, "unsupported operations in txn request"}},
		{"get refused", nil, errRead, false, "GET", widgetsPath + "ns/widgets/a", "",
			[]string{`etcd get "ns/a"`, "not implemented by kine"}},
		{"list refused", nil, errRead, false, "GET", widgetsPath + "ns/widgets", "",
			[]string{`etcd list "` + prefix + `ns/`, "not implemented by kine"}},
		{"update without else", nil, nil, true, "PUT", widgetsPath + "ns/widgets/a", string(update),
			[]string{"response outside etcd's API contract", `"ns/a"`, "update:"}},
		{"delete without else", nil, nil, true, "DELETE", widgetsPath + "ns/widgets/a", "",
			[]string{"response outside etcd's API contract", `"ns/a"`, "delete:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv.arm(tc.txnErr, tc.getErr, tc.noElse)
			defer kv.arm(nil, nil, false)
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
