package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	examplev1ac "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// Config shapes the traffic.
type Config struct {
	Namespace string
	// Names is how many object names the writers share; fewer means more
	// conflicts between them.
	Names int
	// Writers is how many concurrent writers run; writer i uses replica
	// i % len(clients).
	Writers int
	// Interval paces each writer: at most one operation per Interval.
	Interval time.Duration
	// OpTimeout bounds one request.
	OpTimeout time.Duration
}

// RunWriters runs cfg.Writers writers until ctx ends, each on the
// clientset of its replica, and records every write in rec.
func RunWriters(ctx context.Context, cfg Config, clients []versioned.Interface, rec *Recorder) {
	var wg sync.WaitGroup
	for i := range cfg.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &writer{cfg: cfg, id: i, replica: i % len(clients), rec: rec, rng: rand.New(rand.NewPCG(uint64(i), 17))}
			w.client = clients[w.replica]
			w.run(ctx)
		}()
	}
	wg.Wait()
}

type writer struct {
	cfg     Config
	id      int
	replica int
	client  versioned.Interface
	rec     *Recorder
	rng     *rand.Rand
	seq     int
}

func (w *writer) run(ctx context.Context) {
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The step outlives ctx's end: stopping the traffic must not turn
		// the write in flight into an unknown outcome of its own making.
		w.step(context.WithoutCancel(ctx))
	}
}

// step reads one object (a consistent get) and writes it: creates it when
// absent (or applies it, 1 in 4), else updates it (1 in 2) or deletes it
// (1 in 4) with its resourceVersion as precondition, or applies it (1 in
// 4, no precondition).
func (w *writer) step(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, w.cfg.OpTimeout)
	defer cancel()
	name := fmt.Sprintf("db-%d", w.rng.IntN(w.cfg.Names))
	dbs := w.client.ExampleV1().Databases(w.cfg.Namespace)
	readCall := time.Now()
	cur, err := dbs.Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		if _, unavailable := classify(err); unavailable {
			w.rec.readFailed(Interval{Call: readCall, Return: time.Now()})
		}
		return // no write to record
	}
	w.seq++
	op := Op{ID: fmt.Sprintf("w%d-%d", w.id, w.seq), Client: w.id, Replica: w.replica, Name: name}
	op.Call = time.Now()
	var out *examplev1.Database
	switch n := w.rng.IntN(4); {
	case n == 3:
		op.Kind = Apply
		out, err = dbs.Apply(ctx, w.applyDatabase(name, op.ID), metav1.ApplyOptions{FieldManager: ApplyFieldManager, Force: true})
	case err != nil: // not found
		op.Kind = Create
		out, err = dbs.Create(ctx, w.newDatabase(name, op.ID), metav1.CreateOptions{})
	case n < 2:
		op.Kind, op.Precondition = Update, cur.ResourceVersion
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[OpIDAnnotation] = op.ID
		cur.Spec.Replicas = int32(1 + w.rng.IntN(9))
		out, err = dbs.Update(ctx, cur, metav1.UpdateOptions{}) // carries cur's resourceVersion: a precondition
	default:
		op.Kind, op.Precondition = Delete, cur.ResourceVersion
		err = dbs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &cur.ResourceVersion}})
	}
	op.Return = time.Now()
	op.Outcome, op.Unavailable = classify(err)
	if err != nil {
		op.Err = err.Error()
	}
	if out != nil && err == nil {
		op.ResourceVersion = out.ResourceVersion
	}
	w.rec.add(op)
}

// ApplyFieldManager is the field manager of the writers' server-side
// applies.
const ApplyFieldManager = "robustness-apply"

// applyDatabase is the apply configuration of a Database the apply
// writers own: every field they set, tagged with the op id.
func (w *writer) applyDatabase(name, id string) *examplev1ac.DatabaseApplyConfiguration {
	return examplev1ac.Database(name, w.cfg.Namespace).
		WithAnnotations(map[string]string{OpIDAnnotation: id}).
		WithSpec(examplev1ac.DatabaseSpec().WithEngine("postgres").WithVersion("16.4").
			WithReplicas(int32(1 + w.rng.IntN(9))).WithStorageGiB(10))
}

func (w *writer) newDatabase(name, id string) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{OpIDAnnotation: id}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 1, StorageGiB: 10},
	}
}
