package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestTimePagedList serves a collection of 1,234 items in pages and
// checks that the traversal asks for the page size, follows every
// continue token in order and counts every item.
func TestTimePagedList(t *testing.T) {
	const total, limit = 1234, 500
	var mu sync.Mutex // guards asked
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		asked = append(asked, q.Get("continue"))
		mu.Unlock()
		if q.Get("limit") != strconv.Itoa(limit) || q.Has("resourceVersion") {
			http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		from := 0
		if c := q.Get("continue"); c != "" {
			from, _ = strconv.Atoi(strings.TrimPrefix(c, "from-"))
		}
		to := min(from+limit, total)
		next := ""
		if to < total {
			next = fmt.Sprintf("from-%d", to)
		}
		items := strings.TrimSuffix(strings.Repeat(`{"metadata":{}},`, to-from), ",")
		fmt.Fprintf(w, `{"kind":"List","metadata":{"continue":%q},"items":[%s]}`, next, items)
	}))
	defer srv.Close()
	tg := &target{collection: srv.URL + "/apis/g/v1/namespaces/bench/things", plain: srv.Client()}
	p, err := timePagedList(context.Background(), tg, limit, true)
	if err != nil {
		t.Fatal(err)
	}
	if p.pages != 3 || p.items != total || p.took <= 0 {
		t.Fatalf("traversal = %+v, want 3 pages, %d items", p, total)
	}
	if want := []string{"", "from-500", "from-1000"}; strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Fatalf("continue tokens sent = %q, want %q", asked, want)
	}
}

// TestTimePagedListError: a page that fails (an expired continue token
// gets 410 Gone) fails the traversal, naming the page.
func TestTimePagedListError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("continue") != "" {
			http.Error(w, `{"kind":"Status","reason":"Expired"}`, http.StatusGone)
			return
		}
		fmt.Fprint(w, `{"metadata":{"continue":"next"},"items":[{}]}`)
	}))
	defer srv.Close()
	tg := &target{collection: srv.URL + "/x", plain: srv.Client()}
	if _, err := timePagedList(context.Background(), tg, 1, false); err == nil || !strings.Contains(err.Error(), "page 2: HTTP 410") {
		t.Fatalf("err = %v, want page 2's 410", err)
	}
}
