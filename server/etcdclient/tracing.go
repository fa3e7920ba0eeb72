package etcdclient

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	basetracing "k8s.io/component-base/tracing"

	"github.com/apiloom/apiloom/server/internal/tracing"
)

// tracedDialOptions trace the client's gRPC calls as kube-apiserver's
// etcd client does (storagebackend/factory/etcd3.go): otelgrpc's client
// stats handler, whose spans, named by the call
// ("etcdserverpb.KV/Range"), are children of the request's, with the
// W3C propagators carrying the trace to etcd. None without a provider:
// an untraced server's calls pay nothing. otelgrpc's metrics, which
// nothing reads, are off.
func tracedDialOptions(tp trace.TracerProvider) []grpc.DialOption {
	if tp == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(basetracing.Propagators()),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
	))}
}

// traceKV is kv traced, for the embedded etcd, whose reads and writes are
// calls into its server in this process, no gRPC: each call of a traced
// request gets the span otelgrpc would give it over gRPC, by the same
// name, marked etcd.in_process. Untraced requests pay one context lookup.
func traceKV(kv pb.KVClient, tp trace.TracerProvider) pb.KVClient {
	if tp == nil {
		return kv
	}
	return tracedKV{kv}
}

// tracedKV embeds the client so that a stream (RangeStream, which the
// client does not use for Get) passes through untraced.
type tracedKV struct{ pb.KVClient }

// start begins the span of the KV call name (a constant: an untraced call
// allocates nothing).
func start(ctx context.Context, name string) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("rpc.method", name), attribute.Bool("etcd.in_process", true))
	}
	return ctx, span
}

func (t tracedKV) Range(ctx context.Context, in *pb.RangeRequest, opts ...grpc.CallOption) (*pb.RangeResponse, error) {
	ctx, span := start(ctx, "etcdserverpb.KV/Range")
	resp, err := t.KVClient.Range(ctx, in, opts...)
	tracing.End(span, err)
	return resp, err
}

func (t tracedKV) Put(ctx context.Context, in *pb.PutRequest, opts ...grpc.CallOption) (*pb.PutResponse, error) {
	ctx, span := start(ctx, "etcdserverpb.KV/Put")
	resp, err := t.KVClient.Put(ctx, in, opts...)
	tracing.End(span, err)
	return resp, err
}

func (t tracedKV) DeleteRange(ctx context.Context, in *pb.DeleteRangeRequest, opts ...grpc.CallOption) (*pb.DeleteRangeResponse, error) {
	ctx, span := start(ctx, "etcdserverpb.KV/DeleteRange")
	resp, err := t.KVClient.DeleteRange(ctx, in, opts...)
	tracing.End(span, err)
	return resp, err
}

func (t tracedKV) Txn(ctx context.Context, in *pb.TxnRequest, opts ...grpc.CallOption) (*pb.TxnResponse, error) {
	ctx, span := start(ctx, "etcdserverpb.KV/Txn")
	resp, err := t.KVClient.Txn(ctx, in, opts...)
	tracing.End(span, err)
	return resp, err
}

func (t tracedKV) Compact(ctx context.Context, in *pb.CompactionRequest, opts ...grpc.CallOption) (*pb.CompactionResponse, error) {
	ctx, span := start(ctx, "etcdserverpb.KV/Compact")
	resp, err := t.KVClient.Compact(ctx, in, opts...)
	tracing.End(span, err)
	return resp, err
}
