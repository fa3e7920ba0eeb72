package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
)

// kineStatus answers Status as kine v0.17.5 does (pkg/server/maintenance.go):
// a header naming no member, or an error.
type kineStatus struct {
	clientv3.Maintenance
	err error
}

func (k kineStatus) Status(context.Context, string) (*clientv3.StatusResponse, error) {
	if k.err != nil {
		return nil, k.err
	}
	return &clientv3.StatusResponse{Header: &etcdserverpb.ResponseHeader{}, Version: "3.5.13"}, nil
}

// TestVerifyCreatesAuto: "auto" verifies creates on a backend whose
// status names no etcd member or fails, not on etcd itself; "true" and
// "false" are obeyed whatever the backend.
func TestVerifyCreatesAuto(t *testing.T) {
	c := etcdtest.Start(t)
	etcdMaint := c.Maintenance
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name  string
		maint clientv3.Maintenance
		flag  string
		want  bool
	}{
		{"etcd", etcdMaint, VerifyCreatesAuto, false},
		{"kine", kineStatus{}, VerifyCreatesAuto, true},
		{"status fails", kineStatus{err: errors.New("status is not supported")}, VerifyCreatesAuto, true},
		{"etcd forced", etcdMaint, "true", true},
		{"kine off", kineStatus{}, "false", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.Maintenance = tc.maint
			t.Cleanup(func() { c.Maintenance = etcdMaint })
			o := DefaultOptions()
			o.EtcdVerifyCreates = tc.flag
			if got := verifyCreates(t.Context(), &o, false, c, log); got != tc.want {
				t.Errorf("verifyCreates = %v, want %v", got, tc.want)
			}
		})
	}
}
