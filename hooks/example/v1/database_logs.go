package v1

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Logs writes db's log, as pods/log writes a Pod's: a line per Event
// about this Database (its UID: not one deleted before it under the same
// name), oldest first, the last opts.TailLines of them; with opts.Follow,
// then each new or repeated Event as it is written, until the client goes
// away. It reads the Events through the server's watch cache: one watch,
// its initial events the lines already there, so nothing written between
// the tail and the follow is missed or doubled.
func (Database) Logs(req *hook.Request, db *examplev1.Database, opts *examplev1.DatabaseLogOptions, w io.Writer) error {
	if opts.TailLines != nil && *opts.TailLines < 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: examplev1.SchemeGroupVersion.Group, Kind: "DatabaseLogOptions"}, db.Name,
			field.ErrorList{field.Invalid(field.NewPath("tailLines"), *opts.TailLines, "must be greater than or equal to 0")})
	}
	about := fields.Set{"involvedObject.kind": "Database", "involvedObject.name": db.Name}.AsSelector()
	events, err := hook.Watch[*corev1.Event](req, db.Namespace, hook.WatchOptions{Fields: about, SendInitialEvents: true})
	if errors.Is(err, hook.ErrNotServed) {
		return nil // a server without Events has no log
	}
	if err != nil {
		return err
	}
	defer events.Stop()
	ctx := req.Context()
	var tail []*corev1.Event
	for {
		ev, err := events.Next(ctx)
		if err != nil {
			return ended(ctx.Err(), err)
		}
		if ev.Type == hook.InitialEventsEnd {
			break
		}
		if ev.Type == watch.Added && ev.Object.InvolvedObject.UID == db.UID {
			tail = append(tail, ev.Object)
		}
	}
	slices.SortStableFunc(tail, func(a, b *corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	if opts.TailLines != nil && int64(len(tail)) > *opts.TailLines {
		tail = tail[int64(len(tail))-*opts.TailLines:]
	}
	for _, e := range tail {
		if _, err := io.WriteString(w, logLine(e, opts.Timestamps)); err != nil {
			return ended(ctx.Err(), err)
		}
	}
	if !opts.Follow {
		return nil
	}
	// A Write of nothing starts the answer (200 and its headers) with no
	// line yet, so that a client following an empty log is not left
	// waiting for the headers until the first line.
	if _, err := w.Write(nil); err != nil {
		return ended(ctx.Err(), err)
	}
	for {
		ev, err := events.Next(ctx)
		if err != nil {
			return ended(ctx.Err(), err)
		}
		if (ev.Type == watch.Added || ev.Type == watch.Modified) && ev.Object.InvolvedObject.UID == db.UID {
			if _, err := io.WriteString(w, logLine(ev.Object, opts.Timestamps)); err != nil {
				return ended(ctx.Err(), err)
			}
		}
	}
}

// ended is a stream's end: none when the client went away or the server
// is shutting down (ctxErr set), err otherwise.
func ended(ctxErr, err error) error {
	if ctxErr != nil {
		return nil
	}
	return err
}

// eventTime is when e last happened: its series' last time when it
// repeats, else its eventTime (to the microsecond), else its lastTimestamp
// (to the second), as kubectl events orders them.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// logLine is e as a line: "[time ]Type Reason: message[ (xN)]".
func logLine(e *corev1.Event, timestamps bool) string {
	line := fmt.Sprintf("%s %s: %s", e.Type, e.Reason, e.Message)
	if e.Count > 1 {
		line += fmt.Sprintf(" (x%d)", e.Count)
	}
	if timestamps {
		line = eventTime(e).UTC().Format(time.RFC3339Nano) + " " + line
	}
	return line + "\n"
}
