package discovery

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// mediaRange is one clause of an Accept header.
type mediaRange struct {
	typ, subtype string
	params       map[string]string
	q            float64
}

// parseAccept splits an Accept header into its clauses, most preferred first
// (by q, then by position). Clauses with q=0 are refused by the client and
// dropped, and so are malformed ones. It is hand-written rather than
// mime.ParseMediaType because OpenAPI v2's protobuf type contains '@'
// ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"), which the
// RFC grammar mime follows does not allow.
func parseAccept(header string) []mediaRange {
	var out []mediaRange
	for clause := range strings.SplitSeq(header, ",") {
		parts := strings.Split(clause, ";")
		typ, subtype, ok := strings.Cut(strings.ToLower(strings.TrimSpace(parts[0])), "/")
		if !ok || typ == "" || subtype == "" {
			continue
		}
		m := mediaRange{typ: typ, subtype: subtype, q: 1}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if k == "q" {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					m.q = q
				}
				continue
			}
			if m.params == nil {
				m.params = map[string]string{}
			}
			m.params[k] = v
		}
		if m.q > 0 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b mediaRange) int { return cmp.Compare(b.q, a.q) })
	return out
}

// matches reports whether the range admits type/subtype.
func (m mediaRange) matches(typ, subtype string) bool {
	return (m.typ == "*" || m.typ == typ) && (m.subtype == "*" || m.subtype == subtype)
}

// plainJSON reports whether the range admits application/json without asking
// for a particular object form (no g/v/as parameters, as in
// "application/json;as=Table;g=meta.k8s.io;v=v1").
func (m mediaRange) plainJSON() bool {
	if !m.matches("application", "json") {
		return false
	}
	_, as := m.params["as"]
	_, g := m.params["g"]
	_, v := m.params["v"]
	return !as && !g && !v
}

// format is one representation of the /api and /apis discovery documents.
type format int

const (
	formatLegacy format = iota // APIVersions / APIGroupList
	formatAggregatedV2
	formatAggregatedV2Beta1
	numFormats
)

// discoveryFormat picks the representation of /api or /apis the Accept
// header prefers. client-go sends the aggregated v2 type first and plain
// JSON second; kubectl 1.32 also offers v2beta1. Parameters other than g, v
// and as (profile=nopeer, charset) do not change the answer: this server has
// no peers. ok is false when nothing offered is servable (406).
func discoveryFormat(accept string) (f format, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return formatLegacy, true
	}
	for _, m := range parseAccept(accept) {
		if !m.matches("application", "json") {
			continue
		}
		if m.plainJSON() {
			return formatLegacy, true
		}
		if m.params["g"] != "apidiscovery.k8s.io" || m.params["as"] != "APIGroupDiscoveryList" {
			continue
		}
		switch m.params["v"] {
		case "v2":
			return formatAggregatedV2, true
		case "v2beta1":
			return formatAggregatedV2Beta1, true
		}
	}
	return 0, false
}

// acceptsJSON reports whether plain application/json satisfies the Accept
// header; the documents other than /api and /apis have no other form.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, m := range parseAccept(accept) {
		if m.plainJSON() {
			return true
		}
	}
	return false
}

// openAPIV2Format picks JSON or protobuf for /openapi/v2. client-go's
// OpenAPISchema (used by kubectl) asks for protobuf only.
func openAPIV2Format(accept string) (protobuf, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return false, true
	}
	for _, m := range parseAccept(accept) {
		if m.plainJSON() {
			return false, true
		}
		if m.typ == "application" && (m.subtype == "com.github.proto-openapi.spec.v2@v1.0+protobuf" ||
			m.subtype == "com.github.proto-openapi.spec.v2.v1.0+protobuf") {
			return true, true
		}
	}
	return false, false
}
