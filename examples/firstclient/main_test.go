package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestFirstClient runs the program of docs/first-client.md against a real
// server, through the kubeconfig the server writes, twice: a reader who
// runs it again gets the same answer.
func TestFirstClient(t *testing.T) {
	ts := testserver.Start(t, apiserver.Install)
	cfg, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"clientset: database default/billing, 1 replica(s), 10 GiB, resourceVersion ",
		"lister: database default/billing in region eu-west, engine postgres 16.4",
		"controller-runtime: database default/billing in region eu-west",
	}
	for range 2 {
		var out bytes.Buffer
		if err := run(t.Context(), cfg, &out); err != nil {
			t.Fatalf("run: %v\noutput:\n%s", err, out.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(want) {
			t.Fatalf("output:\n%s\nwant %d lines", out.String(), len(want))
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], w)
			}
		}
	}
}

// goBlock is a fenced Go code block of a Markdown page.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocShowsThisProgram: docs/first-client.md shows this file, whole
// and unchanged, so the page shows what TestFirstClient runs.
func TestDocShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/first-client.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range goBlock.FindAllSubmatch(doc, -1) {
		if bytes.Equal(m[1], src) {
			return
		}
	}
	t.Fatal("docs/first-client.md has no ```go block equal to examples/firstclient/main.go; copy the file into the page")
}
