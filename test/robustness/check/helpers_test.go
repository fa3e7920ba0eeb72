package check_test

import (
	"time"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// op builds an operation called at call and returned at ret.
func op(id int, req history.Request, call, ret time.Duration, outcome history.Outcome, resp history.Response) history.Operation {
	return history.Operation{ID: id, Client: id, Request: req, Call: call, Return: ret, Outcome: outcome, Response: resp}
}

func create(key, value string) history.Request {
	return history.Request{Kind: history.Create, Key: key, Value: value}
}

func update(key, value string, pre int64) history.Request {
	return history.Request{Kind: history.Update, Key: key, Value: value, PreconditionRV: pre}
}

func del(key string, pre int64) history.Request {
	return history.Request{Kind: history.Delete, Key: key, PreconditionRV: pre}
}

func get(key string) history.Request { return history.Request{Kind: history.Get, Key: key} }

func list(prefix string) history.Request { return history.Request{Kind: history.List, Key: prefix} }

func acked(rv int64) history.Response { return history.Response{RV: rv} }

func read(value string, rv int64) history.Response {
	return history.Response{Found: true, Read: value, RV: rv}
}

func refused(code int, reason string) history.Response {
	return history.Response{Code: code, Reason: reason}
}

const (
	ack     = history.Acknowledged
	failed  = history.Failed
	unknown = history.Unknown
)

// names reports whether a report names operation id.
func names(r interface{ FailedOps() map[int]bool }, id int) bool { return r.FailedOps()[id] }
