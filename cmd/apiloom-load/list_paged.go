package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// pagedList is one paged traversal of the collection.
type pagedList struct {
	took         time.Duration
	pages, items int
}

// maxPages bounds a traversal whatever the server answers.
const maxPages = 10000

// timePagedList times a paged LIST from the first request to the last
// byte of the last page: limit=pageSize with no resourceVersion (a
// consistent first page, as client-go's pager sends for an unset
// resourceVersion), then the continue token of each page until a page
// has none. Each page is decoded for its token before the next request,
// as a client must.
func timePagedList(ctx context.Context, t *target, pageSize int, gzip bool) (pagedList, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var p pagedList
	start := time.Now()
	token := ""
	for {
		if p.pages == maxPages {
			return p, fmt.Errorf("paged LIST: still a continue token after %d pages", maxPages)
		}
		q := url.Values{"limit": {strconv.Itoa(pageSize)}}
		if token != "" {
			q.Set("continue", token)
		}
		page, err := getPage(ctx, t, t.collection+"?"+q.Encode(), gzip)
		if err != nil {
			return p, fmt.Errorf("paged LIST page %d: %w", p.pages+1, err)
		}
		p.pages++
		p.items += len(page.Items)
		token = page.Metadata.Continue
		if token == "" {
			p.took = time.Since(start)
			return p, nil
		}
	}
}

// listPage is the part of a list a pager reads.
type listPage struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []struct{} `json:"items"`
}

func getPage(ctx context.Context, t *target, u string, gzip bool) (*listPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if !gzip {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := t.plain.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, body)
	}
	var page listPage
	if err := jsonAPI.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return &page, nil
}
