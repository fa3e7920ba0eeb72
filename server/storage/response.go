package storage

import (
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The checks below hold etcd's answers to the contract (package doc). etcd
// always answers so; another etcd-API backend (kine) that answered
// otherwise would otherwise be read as "not found" or stamp an object with
// a wrong resourceVersion: a silent wrong answer. They make it an error
// naming the operation and the key instead.

// committedRevision returns the revision a write transaction that
// succeeded committed at, which is above after, the revision of what the
// write read (0 for a create).
func committedRevision(op, key string, resp *clientv3.TxnResponse, after int64) (int64, error) {
	if resp.Header == nil || resp.Header.Revision <= after {
		var rev int64
		if resp.Header != nil {
			rev = resp.Header.Revision
		}
		return 0, &Error{Err: ErrBadResponse, Key: key, Detail: fmt.Sprintf(
			"%s: the transaction succeeded at revision %d, not after the revision read (%d)", op, rev, after)}
	}
	return resp.Header.Revision, nil
}

// elseKVs returns what the Else branch's single get read in a transaction
// that failed its comparison: none, or the key's current value.
func elseKVs(op, key string, txn *clientv3.TxnResponse) ([]*mvccpb.KeyValue, error) {
	if len(txn.Responses) != 1 || txn.Responses[0].GetResponseRange() == nil {
		return nil, &Error{Err: ErrBadResponse, Key: key, Detail: fmt.Sprintf(
			"%s: the transaction's comparison failed, and its response holds %d results instead of the Else branch's one get",
			op, len(txn.Responses))}
	}
	kvs := txn.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) > 1 {
		return nil, &Error{Err: ErrBadResponse, Key: key, Detail: fmt.Sprintf(
			"%s: the Else branch's get of one key returned %d keys", op, len(kvs))}
	}
	return kvs, nil
}
