package discovery

import "testing"

func TestDiscoveryFormat(t *testing.T) {
	tests := []struct {
		accept string
		want   format
		ok     bool
	}{
		{"", formatLegacy, true},
		{"*/*", formatLegacy, true},
		{"application/json", formatLegacy, true},
		{"application/json, */*", formatLegacy, true},
		// client-go 0.37
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", formatAggregatedV2, true},
		// client-go with NoPeerDiscovery
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", formatAggregatedV2, true},
		// kubectl 1.32
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", formatAggregatedV2, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", formatAggregatedV2Beta1, true},
		{"application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", formatAggregatedV2, true},
		// preference by q, not position
		{"application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", formatAggregatedV2, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json", formatLegacy, true},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", formatLegacy, true},
		{"application/vnd.kubernetes.protobuf,application/json", formatLegacy, true},
		{"application/vnd.kubernetes.protobuf", 0, false},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", 0, false},
		{"application/json;as=Table;g=meta.k8s.io;v=v1", 0, false},
		{"garbage", 0, false},
	}
	for _, tt := range tests {
		got, ok := discoveryFormat(tt.accept)
		if got != tt.want || ok != tt.ok {
			t.Errorf("discoveryFormat(%q) = %v, %v; want %v, %v", tt.accept, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOpenAPIV2Format(t *testing.T) {
	tests := []struct {
		accept       string
		protobuf, ok bool
	}{
		{"", false, true},
		{"application/json", false, true},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", true, true},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", true, true},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json", false, true},
		{"text/plain", false, false},
	}
	for _, tt := range tests {
		protobuf, ok := openAPIV2Format(tt.accept)
		if protobuf != tt.protobuf || ok != tt.ok {
			t.Errorf("openAPIV2Format(%q) = %v, %v; want %v, %v", tt.accept, protobuf, ok, tt.protobuf, tt.ok)
		}
	}
}

func TestETagMatches(t *testing.T) {
	const etag = `"ABC"`
	for header, want := range map[string]bool{
		``: false, `"ABC"`: true, `W/"ABC"`: true, `"X", "ABC"`: true, `*`: true, `"AB"`: false, `ABC`: false,
	} {
		if got := etagMatches(header, etag); got != want {
			t.Errorf("etagMatches(%q) = %v, want %v", header, got, want)
		}
	}
}
