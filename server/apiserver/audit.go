package apiserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/filters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	genericserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// auditing is the server's audit log, kube-apiserver's: the policy that
// gives each request its level and the backends (log file, webhook) its
// events go to, both built by k8s.io/apiserver from the --audit-* flags.
// A nil *auditing is audit off: no filter, no audit context, no cost.
type auditing struct {
	policy  audit.PolicyRuleEvaluator
	backend audit.Backend
	stop    chan struct{}
	// completing are the ResponseComplete events of watches whose body
	// the connection carried, sent off the connection's goroutine; once
	// closing, they are sent on it.
	mu         sync.Mutex
	closing    bool
	completing sync.WaitGroup
}

// goComplete runs send, a watch's ResponseComplete, on a goroutine that
// shutdown waits for.
func (a *auditing) goComplete(send func()) {
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		send()
		return
	}
	a.completing.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.completing.Done()
		send()
	}()
}

// newAuditing builds o's policy and backends with upstream's ApplyTo (on a
// Config of its own: it needs nothing else of it). As in kube-apiserver,
// audit is off unless there is both a policy file and a backend.
func newAuditing(o *genericoptions.AuditOptions) (*auditing, error) {
	var c genericserver.Config
	if err := o.ApplyTo(&c); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if c.AuditBackend == nil || c.AuditPolicyRuleEvaluator == nil {
		return nil, nil
	}
	auditlog.SetInUse()
	return &auditing{policy: c.AuditPolicyRuleEvaluator, backend: c.AuditBackend, stop: make(chan struct{})}, nil
}

// start starts the backends' goroutines (a batching backend's sender).
func (a *auditing) start() error {
	if a == nil {
		return nil
	}
	return a.backend.Run(a.stop)
}

// shutdown stops the backends once the requests have drained, flushing
// what the batching ones still buffer. A webhook that does not answer
// could hold that for minutes (30 s a try, retried): after timeout (the
// server's --shutdown-timeout) the server ends without waiting further,
// and the events still unsent are lost with the process.
func (a *auditing) shutdown(timeout time.Duration, log *slog.Logger) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.completing.Wait()
		close(a.stop)
		a.backend.Shutdown()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		log.Warn("audit: backends still sending events after the shutdown timeout; ending without them", "backend", a.backend.String())
	}
}

// withAuditInit is the outermost filter: with audit on, every request gets
// an Audit-ID, its own or a new one, as upstream's WithAuditInit, and its
// arrival time for the event; with audit off, only a request that brings
// an Audit-ID has one (withAuditID).
func (a *auditing) withAuditInit(next http.Handler) http.Handler {
	if a == nil {
		return withAuditID(next)
	}
	return filters.WithAuditInit(filters.WithRequestReceivedTimestamp(next))
}

// withAudit records the events of an authenticated request, as upstream's
// WithAudit: RequestReceived, ResponseStarted for long-running requests
// (watches), ResponseComplete or Panic. Unlike upstream's, the
// ResponseComplete of a watch whose body the connection carries
// (server/detach) is sent when the watch ends, not when its handler
// returns. The resource handlers add the request and response objects
// (server/endpoints/audit.go); impersonation, inside, the impersonated
// user.
func (a *auditing) withAudit(next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ac := audit.AuditContextFrom(ctx)
		attrs, err := filters.GetAuthorizerAttributes(ctx)
		if err != nil || ac == nil {
			responsewriters.WriteError(w, r, apierrors.NewInternalError(errors.New("failed to create audit event")))
			return
		}
		rac := a.policy.EvaluatePolicyRule(attrs)
		audit.ObservePolicyLevel(ctx, rac.Level)
		if err := ac.Init(rac, a.backend); err != nil {
			responsewriters.WriteError(w, r, apierrors.NewInternalError(errors.New("failed to create audit event")))
			return
		}
		if rac.Level == auditinternal.LevelNone {
			next.ServeHTTP(w, r)
			return
		}
		received, ok := genericrequest.ReceivedTimestampFrom(ctx)
		if !ok {
			received = time.Now()
		}
		audit.LogRequestMetadata(ctx, r, received, attrs)
		if !ac.ProcessEventStage(ctx, auditinternal.StageRequestReceived) {
			audit.ApiserverAuditDroppedCounter.WithContext(ctx).Inc()
			responsewriters.WriteError(w, r, apierrors.NewInternalError(errors.New("failed to store audit event")))
			return
		}
		aw := &auditWriter{ResponseWriter: w, r: r, ac: ac, started: longRunning(r), auditing: a}
		var inner http.ResponseWriter = aw
		if d, ok := detach.Find(w); ok {
			inner = &detachingAuditWriter{auditWriter: aw, inner: d}
		}
		ow, done := detach.Observe(inner, aw.complete)
		defer func() {
			if p := recover(); p != nil {
				ac.SetEventResponseStatus(&metav1.Status{
					Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
					Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", p),
				})
				ac.ProcessEventStage(ctx, auditinternal.StagePanic)
				panic(p)
			}
			done()
		}()
		next.ServeHTTP(ow, r)
	})
}

// withFailedAuthentication audits the 401s of requests that could not be
// authenticated (upstream's WithFailedAuthenticationAudit: one event, at
// ResponseStarted).
func (a *auditing) withFailedAuthentication(unauthorized http.Handler) http.Handler {
	if a == nil {
		return unauthorized
	}
	return filters.WithFailedAuthenticationAudit(unauthorized, a.backend, a.policy)
}

// auditWriter records the response's code in the event when it is
// written, and sends ResponseStarted then for a long-running request.
type auditWriter struct {
	http.ResponseWriter
	r       *http.Request
	ac      *audit.AuditContext
	started bool // send ResponseStarted
	coded   bool // set on the handler's goroutine
	// detached is set when the connection carries the body: its
	// ResponseComplete is then sent by auditing.goComplete.
	detached bool
	auditing *auditing
}

func (aw *auditWriter) code(code int) {
	if aw.coded {
		return
	}
	aw.coded = true
	aw.ac.SetEventResponseStatusCode(int32(code))
	if aw.started {
		aw.ac.ProcessEventStage(aw.r.Context(), auditinternal.StageResponseStarted)
	}
}

func (aw *auditWriter) WriteHeader(code int) {
	aw.code(code)
	aw.ResponseWriter.WriteHeader(code)
}

func (aw *auditWriter) Write(p []byte) (int, error) {
	aw.code(http.StatusOK)
	return aw.ResponseWriter.Write(p)
}

// Flush keeps streaming reachable for handlers that assert http.Flusher.
func (aw *auditWriter) Flush() {
	aw.code(http.StatusOK)
	_ = http.NewResponseController(aw.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController and detach.Find reach the writer
// below.
func (aw *auditWriter) Unwrap() http.ResponseWriter { return aw.ResponseWriter }

// complete sends ResponseComplete once the response has ended. For a body
// the connection carried, it is called on the connection's goroutine,
// which a blocking backend (a webhook in blocking mode: up to 30 s) must
// not hold, so the event is sent from a goroutine of its own, which
// shutdown waits for.
func (aw *auditWriter) complete() {
	if aw.detached {
		aw.auditing.goComplete(aw.completed)
		return
	}
	aw.completed()
}

// completed sends ResponseComplete; a response that set no status (a
// client gone before it) is a success, as upstream's.
func (aw *auditWriter) completed() {
	ctx := aw.r.Context()
	if aw.ac.GetEventResponseStatus() == nil {
		aw.ac.SetEventResponseStatus(&metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"})
		if aw.started && !aw.coded {
			aw.ac.ProcessEventStage(ctx, auditinternal.StageResponseStarted)
		}
	}
	aw.ac.ProcessEventStage(ctx, auditinternal.StageResponseComplete)
}

// detachingAuditWriter is an auditWriter over a connection that can carry
// the body: detaching it starts the response (200).
type detachingAuditWriter struct {
	*auditWriter
	inner detach.Detacher
}

func (d *detachingAuditWriter) DetachBody(src detach.Source) {
	d.code(http.StatusOK)
	d.detached = true
	d.inner.DetachBody(src)
}
