package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// writerStats is what the paced writer did.
type writerStats struct {
	Attempted    int                  `json:"attempted"`
	Acknowledged int                  `json:"acknowledged"`
	Errors       int                  `json:"errors"`
	FirstError   string               `json:"firstError,omitempty"`
	Elapsed      time.Duration        `json:"elapsed"`
	Rate         float64              `json:"rate"` // acknowledged per second
	Latency      accounting.Latencies `json:"latency"`
}

// ensureObjects creates the named objects, or reads those that exist, and
// returns them as the server has them.
func ensureObjects(ctx context.Context, t *target, objs *objectFactory, names []string) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(names))
	for i, name := range names {
		got, err := t.writer.Create(ctx, objs.object(name, "created"), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = t.writer.Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		out[i] = got
	}
	return out, nil
}

// runWriter updates objs round-robin, one write at a time, starting write
// seq at start+seq/rate (or at once if the previous write ran late), until
// writes writes or ctx ends. Each acknowledged write is recorded in tr with
// its start time relative to base.
func runWriter(ctx context.Context, t *target, objs *objectFactory, current []*unstructured.Unstructured, writes int, rate float64, tr *accounting.Tracker, base time.Time) writerStats {
	var st writerStats
	lat := make([]time.Duration, 0, writes)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	start := time.Now()
	for seq := range writes {
		due := start.Add(time.Duration(float64(seq) / rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return st.finish(start, lat)
			}
		}
		i := seq % len(current)
		obj := current[i].DeepCopy()
		begin := time.Now()
		stampWrite(obj, seq, begin.UnixNano())
		objs.setPayload(obj, "seq="+strconv.Itoa(seq)+" ")
		st.Attempted++
		got, err := t.writer.Update(ctx, obj, metav1.UpdateOptions{})
		if err != nil {
			st.Errors++
			if st.FirstError == "" {
				st.FirstError = err.Error()
			}
			if fresh, gerr := t.writer.Get(ctx, obj.GetName(), metav1.GetOptions{}); gerr == nil {
				current[i] = fresh
			}
			if ctx.Err() != nil {
				return st.finish(start, lat)
			}
			continue
		}
		lat = append(lat, time.Since(begin))
		current[i] = got
		st.Acknowledged++
		tr.Written(seq, int64(begin.Sub(base)))
	}
	return st.finish(start, lat)
}

func (st writerStats) finish(start time.Time, lat []time.Duration) writerStats {
	st.Elapsed = time.Since(start)
	if st.Elapsed > 0 {
		st.Rate = float64(st.Acknowledged) / st.Elapsed.Seconds()
	}
	st.Latency = accounting.Summarize(lat)
	return st
}
