package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/history"
)

// readEvery is how many writer intervals a reader waits between two
// reads: the readers add about a fifth of the writers' load.
const readEvery = 5

// readerClient is the first client id of the readers (the writers' are
// 0..Writers-1).
const readerClient = 100

// RunReaders runs one reader per replica until ctx ends: each alternates
// a consistent get of one of the writers' names and a consistent list of
// the namespace (resourceVersion "": served at etcd's current revision),
// one every readEvery writer intervals, and records every read in rec.
// Reads that found the service unavailable count in its seconds
// unavailable.
func RunReaders(ctx context.Context, cfg Config, clients []versioned.Interface, rec *Recorder) {
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			r := &reader{cfg: cfg, id: readerClient + i, replica: i, client: c, rec: rec, rng: rand.New(rand.NewPCG(uint64(i), 23))}
			r.run(ctx)
		})
	}
	wg.Wait()
}

type reader struct {
	cfg     Config
	id      int
	replica int
	client  versioned.Interface
	rec     *Recorder
	rng     *rand.Rand
	seq     int
}

func (r *reader) run(ctx context.Context) {
	tick := time.NewTicker(r.cfg.Interval * readEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.step(ctx)
	}
}

// step does one read. A read cut short by ctx's end is not recorded: it
// says nothing about the server.
func (r *reader) step(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, r.cfg.OpTimeout)
	defer cancel()
	r.seq++
	op := Op{ID: fmt.Sprintf("r%d-%d", r.id, r.seq), Client: r.id, Replica: r.replica}
	dbs := r.client.ExampleV1().Databases(r.cfg.Namespace)
	var err error
	op.Call = time.Now()
	if r.seq%2 == 1 {
		op.Kind, op.Name = Get, fmt.Sprintf("db-%d", r.rng.IntN(r.cfg.Names))
		db, gerr := dbs.Get(ctx, op.Name, metav1.GetOptions{})
		switch err = gerr; {
		case err == nil:
			op.Found, op.Read, op.ResourceVersion = true, db.Annotations[OpIDAnnotation], db.ResourceVersion
		case apierrors.IsNotFound(err):
			err = nil // a successful read of no object
		}
	} else {
		op.Kind = List
		l, lerr := dbs.List(ctx, metav1.ListOptions{})
		if err = lerr; err == nil {
			op.ResourceVersion = l.ResourceVersion
			for _, db := range l.Items {
				op.Items = append(op.Items, history.Item{Key: db.Name, Value: db.Annotations[OpIDAnnotation], RV: rv(db.ResourceVersion)})
			}
		}
	}
	op.Return = time.Now()
	if parent.Err() != nil {
		return
	}
	op.Outcome, op.Unavailable = classify(err)
	if err != nil {
		op.Err = err.Error()
	}
	r.rec.addRead(op)
}
