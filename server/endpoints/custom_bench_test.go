package endpoints

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// BenchmarkCustom is what a kind's own subresource costs against the
// plain request it resembles, through the handler over a watch cache on
// etcd: an action that writes its parent's status (UpdateStatus, an
// in-process PUT of /status) against a client's consistent read and PUT
// of /status, and a
// view against a GET of the object.
func BenchmarkCustom(b *testing.B) {
	sh := &streamHook{lines: make(chan string), started: make(chan *LineOptions, 1), ended: make(chan error, 1)}
	def := customWidgets(sh)
	c, err := cache.New(def, storage.New(etcdtest.Start(b), "/bench/custom", def))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(NewResource(def, c, WithTypeConverter(testTypeConverter(b)), WithWriters(NewWriters()))).(*router)
	if _, err := c.Create(ctx, storage.Key("bench", "w"), storagetest.NewWidget("bench", "w", "red")); err != nil {
		b.Fatal(err)
	}
	obj := widgetsPath + "bench/widgets/w"
	serve := func(b *testing.B, method, path, body string, code int) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != code {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	b.Run("action-updatestatus", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			serve(b, "POST", obj+"/paint", fmt.Sprintf(`{"phase":"p%d"}`, i), http.StatusCreated)
		}
	})
	// The client reads the object first (consistently, as the action
	// reads its parent) for its resourceVersion.
	b.Run("get-put-status", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			cur, err := c.Get(ctx, storage.Key("bench", "w"), storage.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			serve(b, "PUT", obj+"/status", fmt.Sprintf(`{"metadata":{"name":"w","namespace":"bench","resourceVersion":%q},"status":{"phase":"q%d"}}`, cur.ResourceVersion, i), http.StatusOK)
		}
	})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, "GET", obj+"/summary", "", http.StatusOK)
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, "GET", obj, "", http.StatusOK)
		}
	})
}

// BenchmarkIdleStream is what one idle stream holds in the handler, with
// no network in between: its goroutine's stack and what it keeps on the
// heap (the parent object, the options, the writer), as bytes/stream.
func BenchmarkIdleStream(b *testing.B) {
	const n = 500
	sh := &streamHook{lines: make(chan string), started: make(chan *LineOptions, n), ended: make(chan error, n)}
	def := customWidgets(sh)
	c, err := cache.New(def, storage.New(etcdtest.Start(b), "/bench/idle", def))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(NewResource(def, c))
	if _, err := c.Create(ctx, storage.Key("bench", "w"), storagetest.NewWidget("bench", "w", "red")); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sctx, stop := context.WithCancel(ctx)
		for range n {
			r := httptest.NewRequestWithContext(sctx, "GET", widgetsPath+"bench/widgets/w/lines?follow=true", nil)
			go h.ServeHTTP(httptest.NewRecorder(), r)
		}
		for range n {
			<-sh.started
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		stop()
		for range n {
			<-sh.ended
		}
		b.ReportMetric(float64((after.HeapInuse+after.StackInuse)-(before.HeapInuse+before.StackInuse))/n, "bytes/stream")
	}
}
