package apiserver

import (
	"context"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// VerifyCreatesAuto is --etcd-verify-creates' default: creates are read
// back on a backend that is not etcd itself.
const VerifyCreatesAuto = "auto"

// verifyCreates decides whether the stores read every create back
// (storage.WithVerifiedCreates). etcd answers a create truthfully; kine
// may acknowledge one it did not store while its database fails, so with
// "auto" every backend that does not prove to be etcd is verified.
func verifyCreates(ctx context.Context, o *Options, embedded bool, c *clientv3.Client, log *slog.Logger) bool {
	switch o.EtcdVerifyCreates {
	case "true":
		return true
	case "false":
		return false
	}
	if embedded {
		return false
	}
	isEtcd, why := backendIsEtcd(ctx, c, c.Endpoints()[0])
	if !isEtcd {
		log.Info("creates are read back before they are acknowledged (--etcd-verify-creates=auto)", "because", why)
	}
	return !isEtcd
}

// backendIsEtcd tells whether the etcd API at endpoint is served by etcd
// itself, and why not: etcd's status names the member that answered,
// kine's (and other etcd-API backends') names none or is not implemented.
func backendIsEtcd(ctx context.Context, c *clientv3.Client, endpoint string) (bool, string) {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := c.Status(sctx, endpoint)
	switch {
	case err != nil:
		return false, "its status request failed: " + err.Error()
	case st.Header == nil || st.Header.MemberId == 0:
		return false, "its status names no etcd member (kine, or another etcd-API backend)"
	}
	return true, ""
}
