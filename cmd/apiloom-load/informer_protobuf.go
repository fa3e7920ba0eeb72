package main

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	examplev1informers "github.com/apiloom/apiloom/generated/informers/externalversions/example/v1"
	examplev2alpha1informers "github.com/apiloom/apiloom/generated/informers/externalversions/example/v2alpha1"
)

// Media types of the protobuf format, as kube-controller-manager sets
// them on its clients: protobuf bodies, protobuf preferred, JSON accepted
// (so that a server without protobuf for a kind still answers).
const (
	protobufMedia        = "application/vnd.kubernetes.protobuf"
	protobufAcceptHeader = protobufMedia + ",application/json"
)

// informerBuilder makes a round's informer over a client built from cfg
// and hc (the round's own connection, wrapped by its request recorder).
type informerBuilder func(cfg *rest.Config, hc *http.Client, namespace string) (cache.SharedIndexInformer, error)

// dynamicInformer is client-go's dynamic informer for gvr: JSON, or CBOR
// when the round's gates allow it. It cannot decode protobuf, which needs
// the Go types.
func dynamicInformer(gvr schema.GroupVersionResource) informerBuilder {
	return func(cfg *rest.Config, hc *http.Client, namespace string) (cache.SharedIndexInformer, error) {
		dc, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, err
		}
		return newInformer(dc, gvr, namespace), nil
	}
}

// typedInformers are the generated informers the load tool has, by the
// resource they watch: the protobuf format needs Go types, and these are
// the kinds of apis/ that the load scenarios create (apiloom's default
// --group and --resource).
var typedInformers = map[schema.GroupVersionResource]func(cs versioned.Interface, namespace string) cache.SharedIndexInformer{
	{Group: "example.apiloom.dev", Version: "v1", Resource: "databases"}: func(cs versioned.Interface, namespace string) cache.SharedIndexInformer {
		return examplev1informers.NewFilteredDatabaseInformer(cs, namespace, 0, cache.Indexers{}, nil)
	},
	{Group: "example.apiloom.dev", Version: "v2alpha1", Resource: "databases"}: func(cs versioned.Interface, namespace string) cache.SharedIndexInformer {
		return examplev2alpha1informers.NewFilteredDatabaseInformer(cs, namespace, 0, cache.Indexers{}, nil)
	},
}

// protobufInformer is the generated clientset's informer for gvr with the
// client in protobuf; false when the load tool has no Go types for gvr.
func protobufInformer(gvr schema.GroupVersionResource) (informerBuilder, bool) {
	newInf, ok := typedInformers[gvr]
	if !ok {
		return nil, false
	}
	return func(cfg *rest.Config, hc *http.Client, namespace string) (cache.SharedIndexInformer, error) {
		cs, err := versioned.NewForConfigAndClient(protobufConfig(cfg), hc)
		if err != nil {
			return nil, err
		}
		return newInf(cs, namespace), nil
	}, true
}

// protobufConfig is a copy of cfg asking for protobuf as
// kube-controller-manager's clients do.
func protobufConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = protobufMedia
	c.AcceptContentTypes = protobufAcceptHeader
	return c
}

// probeProtobuf asks the collection for one item in protobuf, as the
// protobuf clients would, when the load tool has no Go types for the
// resource and so cannot run an informer: a server that answers in
// another media type does not serve the kind in protobuf (kube-apiserver
// serves custom resources in JSON only), which is errFormatNotServed
// with the answer recorded; one that answers in protobuf serves what
// this tool cannot decode, an errInformer.
func probeProtobuf(ctx context.Context, hc *http.Client, collection string, gvr schema.GroupVersionResource) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, collection+"?limit=1", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", protobufAcceptHeader)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: protobuf probe: %w", errInformer, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%w: protobuf probe: LIST answered %d %s", errInformer, resp.StatusCode, media)
	case media != protobufMedia:
		return fmt.Errorf("%w: asked for %s, the server sent 1 LIST answered in %s", errFormatNotServed, formatProtobuf, media)
	}
	return fmt.Errorf("%w: the server serves %s in protobuf, but the load tool has Go types only for %v", errInformer, gvr, typedResources())
}

// typedResources names the resources of typedInformers, for messages.
func typedResources() []string {
	var out []string
	for gvr := range typedInformers {
		out = append(out, gvr.String())
	}
	slices.Sort(out)
	return out
}
