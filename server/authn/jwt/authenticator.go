package jwt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/oidc"
)

// Options are what every generation of the authenticator shares.
type Options struct {
	// SigningAlgs are the accepted JOSE algorithms; nil is every one
	// k8s.io/apiserver knows (kube-apiserver's choice with
	// --authentication-config), --oidc-signing-algs otherwise.
	SigningAlgs []string
	// APIAudiences are the server's own audiences (--api-audiences); a
	// JWT authenticator is audience-agnostic towards them, as upstream.
	APIAudiences authenticator.Audiences
	// DisallowedIssuers are the ServiceAccount token issuers.
	DisallowedIssuers []string
	// OldGrace is how long a replaced generation keeps its key fetchers
	// after a reload, for requests still using it; zero is a minute,
	// kube-apiserver's.
	OldGrace time.Duration
	// HealthPoll is how often a reload checks whether the new issuers'
	// keys have been fetched; zero is 100ms.
	HealthPoll time.Duration
}

// generation is the authenticator built from one configuration.
type generation struct {
	token   authenticator.Token
	healthy func() error
	cancel  context.CancelFunc
}

// Authenticator answers bearer tokens with the JWT authenticators of the
// configuration in force. Update swaps in a new configuration atomically:
// a request sees the old or the new one, never a mix. Close stops every
// generation's key fetchers; it must be called when the server stops.
type Authenticator struct {
	opts Options
	cur  atomic.Pointer[generation]

	life   context.Context // parent of every generation's
	stop   context.CancelFunc
	wg     sync.WaitGroup // the goroutines retiring old generations
	update sync.Mutex     // one Update at a time
}

// New builds the authenticator for c (already validated, or validated
// here by k8s.io/apiserver as each issuer is built). Its issuers'
// discovery documents and keys are fetched in the background: until they
// are, their tokens are refused (Healthy says so).
func New(c *apiserver.AuthenticationConfiguration, opts Options) (*Authenticator, error) {
	if opts.OldGrace <= 0 {
		opts.OldGrace = time.Minute
	}
	if opts.HealthPoll <= 0 {
		opts.HealthPoll = 100 * time.Millisecond
	}
	life, stop := context.WithCancel(context.Background())
	a := &Authenticator{opts: opts, life: life, stop: stop}
	g, err := a.build(c)
	if err != nil {
		stop()
		return nil, err
	}
	a.cur.Store(g)
	return a, nil
}

// build makes one generation: one k8s.io/apiserver JWT authenticator per
// issuer, asked in the file's order, the first error failing the token
// (upstream's union for JWTs, so that a token one issuer refuses is
// reported rather than dropped).
func (a *Authenticator) build(c *apiserver.AuthenticationConfiguration) (_ *generation, err error) {
	ctx, cancel := context.WithCancel(a.life)
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	algs := a.opts.SigningAlgs
	if len(algs) == 0 {
		algs = oidc.AllValidSigningAlgorithms()
	}
	var tokens []authenticator.Token
	var checks []func() error
	for _, j := range c.JWT {
		var ca oidc.CAContentProvider
		if j.Issuer.CertificateAuthority != "" {
			if ca, err = dynamiccertificates.NewStaticCAContent("oidc-authenticator", []byte(j.Issuer.CertificateAuthority)); err != nil {
				return nil, err
			}
		}
		t, err := oidc.New(ctx, oidc.Options{
			JWTAuthenticator: j, CAContentProvider: ca, SupportedSigningAlgs: algs, DisallowedIssuers: a.opts.DisallowedIssuers,
		})
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, t)
		checks = append(checks, t.HealthCheck)
	}
	return &generation{
		token: authenticator.WrapAudienceAgnosticToken(a.opts.APIAudiences, tokenunion.NewFailOnError(tokens...)),
		healthy: func() error {
			var errs []error
			for _, check := range checks {
				if err := check(); err != nil {
					errs = append(errs, err)
				}
			}
			return utilerrors.NewAggregate(errs)
		},
		cancel: cancel,
	}, nil
}

// AuthenticateToken asks the configuration in force.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	return a.cur.Load().token.AuthenticateToken(ctx, token)
}

// Healthy is nil once every issuer's keys have been fetched.
func (a *Authenticator) Healthy() error { return a.cur.Load().healthy() }

// Update replaces the configuration by c once every issuer of c has its
// keys (so that a reload never opens a window where good tokens fail), or
// fails, keeping the old one, when ctx ends first. The replaced
// generation's key fetchers stop after Options.OldGrace.
func (a *Authenticator) Update(ctx context.Context, c *apiserver.AuthenticationConfiguration) error {
	a.update.Lock()
	defer a.update.Unlock()
	g, err := a.build(c)
	if err != nil {
		return err
	}
	tick := time.NewTicker(a.opts.HealthPoll)
	defer tick.Stop()
	for {
		err := g.healthy()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			g.cancel()
			return errors.Join(err, ctx.Err())
		case <-tick.C:
		}
	}
	old := a.cur.Swap(g)
	a.wg.Go(func() {
		t := time.NewTimer(a.opts.OldGrace)
		defer t.Stop()
		select {
		case <-a.life.Done():
		case <-t.C:
		}
		old.cancel()
	})
	return nil
}

// Close stops every generation and waits for the goroutines retiring them.
func (a *Authenticator) Close() {
	a.stop()
	a.wg.Wait()
}

// Watch reloads the configuration from path every interval until ctx
// ends, as kube-apiserver does with --authentication-config: a file that
// does not change is not reloaded; one that does not decode or validate
// is logged and skipped until it changes again; one whose issuers do not
// become healthy within updateTimeout is retried at the next tick. loaded
// is the content the authenticator was built from.
func (a *Authenticator) Watch(ctx context.Context, path string, loaded []byte, interval, updateTimeout time.Duration, log *slog.Logger) {
	tracked := loaded
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			log.Error("authentication config: reading", "path", path, "err", err)
			continue
		}
		if bytes.Equal(data, tracked) {
			continue
		}
		c, err := Decode(data)
		if err == nil {
			err = Validate(c, a.opts.DisallowedIssuers)
		}
		if err == nil {
			err = ForbidAnonymous(c)
		}
		if err != nil {
			// Never valid, whatever is retried: wait for another change.
			log.Error("authentication config: not reloaded", "path", path, "err", err)
			tracked = data
			continue
		}
		uctx, cancel := context.WithTimeout(ctx, updateTimeout)
		err = a.Update(uctx, c)
		cancel()
		if err != nil {
			log.Error("authentication config: not reloaded, will retry", "path", path, "err", err)
			continue
		}
		tracked = data
		log.Info("authentication config: reloaded", "path", path)
	}
}

// ForbidAnonymous refuses a configuration's anonymous section, which
// apiloom does not implement (--anonymous-auth is its switch).
func ForbidAnonymous(c *apiserver.AuthenticationConfiguration) error {
	if c.Anonymous != nil {
		return errors.New("anonymous: not supported by apiloom, use --anonymous-auth")
	}
	return nil
}
