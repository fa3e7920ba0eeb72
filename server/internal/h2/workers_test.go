package h2

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestWorkersReuseAnIdleGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorkers(time.Minute)
		defer w.stop()
		for i := range 10 {
			done := make(chan struct{})
			w.run(func() { close(done) })
			<-done
			synctest.Wait() // the worker is back waiting for a task
			if n := w.live.Load(); n != 1 {
				t.Fatalf("after request %d: %d goroutines, want the one reused", i, n)
			}
		}
	})
}

func TestWorkersNeverQueueBehindABusyOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorkers(time.Minute)
		defer w.stop()
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			w.run(func() { defer wg.Done(); <-release })
		}
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done // runs while the three others block
		if n := w.live.Load(); n != 4 {
			t.Fatalf("%d goroutines for 4 concurrent requests", n)
		}
		close(release)
		wg.Wait()
	})
}

func TestWorkersExitWhenIdleOrStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorkers(5 * time.Second)
		block := make(chan struct{})
		w.run(func() {})
		w.run(func() { <-block })
		synctest.Wait()
		if n := w.live.Load(); n != 2 {
			t.Fatalf("%d goroutines, want 2", n)
		}
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()
		if n := w.live.Load(); n != 1 {
			t.Fatalf("after the idle time: %d goroutines, want the busy one only", n)
		}
		w.stop()
		close(block)
		w.wait()
		if n := w.live.Load(); n != 0 {
			t.Fatalf("after stop: %d goroutines", n)
		}
		ran := make(chan struct{})
		w.run(func() { close(ran) })
		<-ran
		synctest.Wait()
		if n := w.live.Load(); n != 0 {
			t.Fatalf("a request after stop left %d goroutines", n)
		}
	})
}
