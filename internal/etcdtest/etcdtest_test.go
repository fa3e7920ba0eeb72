package etcdtest

import (
	"context"
	"testing"
)

func TestStartServesPutAndGet(t *testing.T) {
	c := Start(t)
	ctx := t.Context()
	if _, err := c.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(context.WithoutCancel(ctx), "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("got %v", resp.Kvs)
	}
}
