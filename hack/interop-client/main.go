// Command interop-client is Go's standard HTTP client (net/http, whose
// HTTP/2 is the one bundled in the standard library, not x/net's that the
// end-to-end tests use) in hack/interop.sh: it creates, gets, lists and
// watches databases of the example group over the protocol it is told,
// checks each answer, and prints one line per check. It exits 1 if any
// check failed.
//
//	interop-client -server https://127.0.0.1:6443 -ca pki/ca.crt -token admin-token -proto h2 -name go-h2
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	server := flag.String("server", "", "the server's URL")
	caFile := flag.String("ca", "", "the CA that signed the server's certificate (PEM)")
	tokenFile := flag.String("token", "", "file holding the admin bearer token")
	proto := flag.String("proto", "h2", "h2 or http/1.1")
	ns := flag.String("namespace", "interop", "namespace of the objects")
	name := flag.String("name", "go", "name of the object created (a second one gets the suffix -live)")
	flag.Parse()
	c, err := newClient(*server, *caFile, *tokenFile, *proto)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop-client:", err)
		os.Exit(2)
	}
	label := "go-" + strings.ReplaceAll(*proto, "/", "")
	if !run(c, label, *ns, *name) {
		os.Exit(1)
	}
}

// client is one HTTP client of one protocol, with the admin token.
type client struct {
	http   *http.Client
	server string
	token  string
	proto  int // the ProtoMajor every answer must have
}

func newClient(server, caFile, tokenFile, proto string) (*client, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no certificate in " + caFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	major := 2
	switch proto {
	case "h2":
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
	case "http/1.1":
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
		major = 1
	default:
		return nil, fmt.Errorf("-proto %q: want h2 or http/1.1", proto)
	}
	return &client{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}, server: server, token: strings.TrimSpace(string(token)), proto: major}, nil
}

// do sends a request and returns the answer's status and body; the
// answer must come over the client's protocol.
func (c *client) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.ProtoMajor != c.proto {
		return 0, nil, fmt.Errorf("answered over %s", resp.Proto)
	}
	return resp.StatusCode, b, err
}

// run makes every check and reports whether all passed.
func run(c *client, label, ns, name string) bool {
	ctx := context.Background()
	collection := "/apis/example.apiloom.dev/v1/namespaces/" + ns + "/databases"
	ok := true
	check := func(what string, err error) {
		if err != nil {
			ok = false
			fmt.Printf("FAIL %s %s: %v\n", label, what, err)
			return
		}
		fmt.Printf("PASS %s %s\n", label, what)
	}
	expect := func(method, path string, body []byte, code int, want string) error {
		got, b, err := c.do(ctx, method, path, body)
		if err != nil {
			return err
		}
		if got != code || !bytes.Contains(b, []byte(want)) {
			return fmt.Errorf("%d %.200s, want %d with %q", got, b, code, want)
		}
		return nil
	}
	check("POST create", expect(http.MethodPost, collection, database(name), http.StatusCreated, `"name":"`+name+`"`))
	check("POST duplicate 409 AlreadyExists", expect(http.MethodPost, collection, database(name), http.StatusConflict, `"reason":"AlreadyExists"`))
	check("GET", expect(http.MethodGet, collection+"/"+name, nil, http.StatusOK, `"name":"`+name+`"`))
	check("GET missing 404 NotFound", expect(http.MethodGet, collection+"/no-such-"+name, nil, http.StatusNotFound, `"reason":"NotFound"`))
	check("LIST", expect(http.MethodGet, collection, nil, http.StatusOK, `"kind":"DatabaseList"`))
	check("WATCH initial ADDED, a live ADDED, end at timeoutSeconds", watch(ctx, c, collection, name))
	return ok
}

// watch opens a watch from resourceVersion 0 for 3 s, reads the initial
// ADDED of name, creates name-live while the watch is open and reads its
// ADDED, and expects the server to end the stream at the timeout.
func watch(ctx context.Context, c *client, collection, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+collection+"?watch=true&resourceVersion=0&timeoutSeconds=3", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	// The watch outlives the client's overall timeout; ctx bounds it.
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != c.proto {
		return fmt.Errorf("watch: %s over %s", resp.Status, resp.Proto)
	}
	events := bufio.NewScanner(resp.Body)
	events.Buffer(nil, 1<<20)
	live := name + "-live"
	wantNext := name
	for events.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(events.Bytes(), &ev); err != nil {
			return fmt.Errorf("event %q: %w", events.Bytes(), err)
		}
		if ev.Type != "ADDED" || ev.Object.Metadata.Name != wantNext {
			continue
		}
		if wantNext == live {
			wantNext = ""
			continue
		}
		wantNext = live
		if code, b, err := c.do(ctx, http.MethodPost, collection, database(live)); err != nil || code != http.StatusCreated {
			return fmt.Errorf("create %s during the watch: %d %.200s %v", live, code, b, err)
		}
	}
	if err := events.Err(); err != nil {
		return fmt.Errorf("watch ended with %w (want the server to end it at timeoutSeconds)", err)
	}
	if wantNext != "" {
		return fmt.Errorf("watch ended without the ADDED of %s", wantNext)
	}
	return nil
}

// database is a Database of the example group, as JSON.
func database(name string) []byte {
	return []byte(`{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"` + name +
		`"},"spec":{"engine":"postgres","version":"16.4","replicas":3,"storageGiB":100,"region":"eu-central"}}`)
}
