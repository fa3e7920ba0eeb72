package admissionconf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// userAgent is sent by every request, so that both servers name the same
// field manager in managedFields (which webhooks see).
const userAgent = "admconf"

// client sends raw requests to one server: raw, so that the answer's code,
// Warning headers and Status come back exactly as sent.
type client struct {
	host string
	http *http.Client
}

func newClient(cfg *rest.Config) (*client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &client{host: cfg.Host, http: hc}, nil
}

// answer is what a write is compared by.
type answer struct {
	Code int `json:"code"`
	// Reason, Message and Details are the Status's, when one came back.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Details any    `json:"details,omitempty"`
	// Warnings are the Warning headers' texts, in order.
	Warnings []string `json:"warnings,omitempty"`
	// Labels are the returned object's labels (a Status has none).
	Labels map[string]string `json:"labels,omitempty"`

	// object is the body, decoded; not compared as a whole (uids, times).
	object map[string]any
}

// failed reports whether the server refused the write.
func (a answer) failed() bool { return a.Code >= 300 }

// do sends method path?query with body (JSON, or a patch of contentType
// when given) and reads the answer. An error is a transport error only.
func (c *client) do(ctx context.Context, method, path string, query url.Values, contentType string, body any) (answer, error) {
	var rd io.Reader
	if body != nil {
		data, ok := body.([]byte)
		if !ok {
			var err error
			if data, err = json.Marshal(body); err != nil {
				return answer{}, err
			}
		}
		rd = bytes.NewReader(data)
	}
	u := c.host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	a := answer{Code: resp.StatusCode}
	warnings, _ := utilnet.ParseWarningHeaders(resp.Header.Values("Warning"))
	for _, w := range warnings {
		a.Warnings = append(a.Warnings, w.Text)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		a.Message = "not JSON: " + string(data)
		return a, nil
	}
	a.object = obj
	if obj["kind"] == "Status" {
		a.Reason, _ = obj["reason"].(string)
		a.Message, _ = obj["message"].(string)
		if d, ok := obj["details"].(map[string]any); ok {
			delete(d, "uid")
			a.Details = d
		}
		return a, nil
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		if labels, ok := meta["labels"].(map[string]any); ok {
			a.Labels = map[string]string{}
			for k, v := range labels {
				a.Labels[k], _ = v.(string)
			}
		}
	}
	return a, nil
}

// dryRun is the query of a dry-run write.
var dryRun = url.Values{"dryRun": {"All"}}
