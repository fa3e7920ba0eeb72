package h2_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/testenv"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// TestH2Spec runs the h2spec conformance suite (RFC 7540/9113 and HPACK)
// against a TLS server configured with h2.Configure, and fails with every
// case h2spec fails. It needs the h2spec tool, so it runs when asked, and
// always in CI (APILOOM_CI=1, set by make test and .ci/run):
//
//	H2SPEC=1 go test -run TestH2Spec -v ./server/internal/h2/   (make h2spec)
//
// H2SPEC=1 builds h2spec from the module pinned in testdata/h2spec, which
// needs the Go module proxy (or a module cache that has it) but keeps
// h2spec out of apiloom's go.mod; H2SPEC=/path/to/h2spec uses that binary.
// Once asked for, h2spec that cannot be built or run fails the test; only
// a plain `go test`, outside CI, skips it. H2SPEC_ARGS adds
// arguments: "--strict" for the SHOULD-level cases too, "--verbose" for
// every frame exchanged, section ids such as "http2/6.9" to run fewer.
//
// A pass says less than it seems for connection errors: h2spec accepts
// the connection closing after a GOAWAY with the wrong error code.
func TestH2Spec(t *testing.T) {
	which, run := h2specRequest(os.Getenv)
	if !run {
		t.Skip("set H2SPEC=1 (build h2spec) or H2SPEC=/path/to/h2spec to run the conformance suite; CI (" + testenv.CIEnv + "=1) always runs it")
	}
	bin := which
	if which == "1" {
		bin = buildH2Spec(t)
	}

	ts := httptest.NewUnstartedServer(http.HandlerFunc(h2specHandler))
	h2.Configure(ts.Config, &h2.Server{})
	ts.TLS = ts.Config.TLSConfig // StartTLS listens with ts.TLS: offer h2 there
	ts.StartTLS()
	defer ts.Close()
	_, port, err := net.SplitHostPort(ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	report := filepath.Join(t.TempDir(), "h2spec.xml")
	args := []string{"--tls", "--insecure", "--host", "127.0.0.1", "--port", port, "--timeout", "2", "--junit-report", report}
	args = append(args, strings.Fields(os.Getenv("H2SPEC_ARGS"))...)
	cmd := exec.CommandContext(ctx, bin, args...)
	out, runErr := cmd.CombinedOutput()
	t.Logf("h2spec output:\n%s", out)

	failures, total, err := readH2SpecReport(report)
	if err != nil {
		t.Fatalf("h2spec (exit: %v) wrote no readable report: %v", runErr, err)
	}
	if total == 0 {
		t.Fatalf("h2spec ran no case (exit: %v)", runErr)
	}
	for _, f := range failures {
		t.Errorf("h2spec %s %s\n%s", f.id, f.desc, f.detail)
	}
	t.Logf("h2spec: %d cases, %d failed", total, len(failures))
	if len(failures) == 0 && runErr != nil {
		t.Errorf("h2spec exited with %v but reported no failed case", runErr)
	}
}

// TestH2SpecRunsInCI: CI cannot pass without the conformance run, whatever
// H2SPEC says; outside CI, H2SPEC alone decides.
func TestH2SpecRunsInCI(t *testing.T) {
	for _, tc := range []struct {
		h2spec, ci string
		which      string
		run        bool
	}{
		{"", "", "", false},
		{"", "1", "1", true},
		{"1", "", "1", true},
		{"/opt/h2spec", "1", "/opt/h2spec", true},
	} {
		env := map[string]string{"H2SPEC": tc.h2spec, testenv.CIEnv: tc.ci}
		which, run := h2specRequest(func(k string) string { return env[k] })
		if which != tc.which || run != tc.run {
			t.Errorf("H2SPEC=%q %s=%q: runs %t with %q, want %t with %q", tc.h2spec, testenv.CIEnv, tc.ci, run, which, tc.run, tc.which)
		}
	}
}

// h2specHandler reads the request body and answers with a short body,
// which is what h2spec's cases expect of GET / and POST /.
func h2specHandler(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "hello from apiloom's HTTP/2 server\n")
}

// h2specRequest says whether TestH2Spec runs, and with which h2spec
// ("1": build it): when H2SPEC asks for it, and in CI whatever H2SPEC says.
func h2specRequest(getenv func(string) string) (which string, run bool) {
	which = getenv("H2SPEC")
	if which == "" && getenv(testenv.CIEnv) == "1" {
		which = "1"
	}
	return which, which != ""
}

// buildH2Spec builds h2spec into a temporary directory from the module
// pinned in testdata/h2spec, or fails the test when it cannot: it runs
// only when asked for (h2specRequest), and then not running is a failure.
func buildH2Spec(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("h2spec cannot be built: %v", err)
	}
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join("testdata", "h2spec", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "h2spec")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-p", "1", "-o", bin, "github.com/summerwind/h2spec/cmd/h2spec")
	cmd.Dir = dir
	// go.mod and go.sum pin every module: nothing is resolved anew.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("h2spec cannot be built (it needs the Go module proxy, or a module cache that has testdata/h2spec's modules): %v\n%s", err, out)
	}
	return bin
}

// h2specFailure is one failed h2spec case.
type h2specFailure struct {
	id     string // section and case number, as h2spec prints them: "http2/6.5.3/2"
	desc   string
	detail string // expected and actual
}

// readH2SpecReport reads h2spec's JUnit report: the failed cases and how
// many cases ran.
func readH2SpecReport(path string) (failures []h2specFailure, total int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var report struct {
		Suites []struct {
			Package string `xml:"package,attr"`
			Cases   []struct {
				Package   string  `xml:"package,attr"`
				ClassName string  `xml:"classname,attr"`
				Failure   *string `xml:"failure"`
				Error     *string `xml:"error"`
				Skipped   *string `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &report); err != nil {
		return nil, 0, err
	}
	for _, s := range report.Suites {
		for i, c := range s.Cases {
			if c.Skipped != nil {
				continue
			}
			total++
			detail := c.Failure
			if detail == nil {
				detail = c.Error
			}
			if detail == nil {
				continue
			}
			failures = append(failures, h2specFailure{
				id:     fmt.Sprintf("%s/%d", c.Package, i+1),
				desc:   c.ClassName,
				detail: h2specDetail(*detail),
			})
		}
	}
	return failures, total, nil
}

// h2specDetail labels a failure's text. h2spec writes a mismatch as its
// expected frames, one a line, then the actual one on the last line; any
// other error (a timeout, a closed connection) is one line.
func h2specDetail(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 2 {
		return "error:    " + lines[0]
	}
	last := len(lines) - 1
	return "expected: " + strings.Join(lines[:last], "\n          ") + "\nactual:   " + lines[last]
}
