package robustness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// recoverWithin bounds how long a replica may take to route around a
// dead connection to one member while the fault holds: gRPC keepalive
// (30 s without a frame, then 10 s for the ping's answer, kube-apiserver's
// values) plus the writers' timeout and a margin.
const recoverWithin = 90 * time.Second

// TestPartitionLeader: cut the etcd leader off from the other members and
// from every client (blackhole routes both ways); the others elect a new
// leader and both replicas must keep acknowledging writes; then heal.
func TestPartitionLeader(t *testing.T) {
	runScenarioWith(t, scenarioOptions{cluster: []cluster.Option{cluster.WithNetwork()}}, func(ctx context.Context, s *scenario) {
		l, err := s.c.Etcd.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("partitioning leader %s (%s)", l.Name, l.ClientURL)
		if err := s.c.Net.Partition(ctx, l.Index()); err != nil {
			t.Fatal(err)
		}
		s.holdRecovered(ctx, 0, 1)
		s.heal(ctx)
	})
}

// TestPartitionReplicaMember: cut an etcd follower off from the other
// members only. The replicas still reach it, but it has no quorum: a
// replica's watch on it must be ended (WithRequireLeader) and its
// requests go to the other members, rather than the replica serving a
// silently stale view. Both replicas must keep acknowledging writes.
func TestPartitionReplicaMember(t *testing.T) {
	runScenarioWith(t, scenarioOptions{cluster: []cluster.Option{cluster.WithNetwork()}}, func(ctx context.Context, s *scenario) {
		f, err := s.c.Etcd.Follower(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("partitioning %s (%s) from its peers; the replicas still reach it", f.Name, f.ClientURL)
		if err := s.c.Net.PartitionPeers(ctx, f.Index()); err != nil {
			t.Fatal(err)
		}
		s.holdRecovered(ctx, 0, 1)
		s.heal(ctx)
	})
}

// TestDelayLeader: delay every byte of the etcd leader's peer traffic by
// 200 ms ± 100 ms (etcd's proxy on its advertised peer URL); then remove
// the delay.
func TestDelayLeader(t *testing.T) {
	runScenarioWith(t, scenarioOptions{cluster: []cluster.Option{cluster.WithPeerProxies()}}, func(ctx context.Context, s *scenario) {
		l, err := s.c.Etcd.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("delaying leader %s's peer traffic", l.Name)
		l.PeerProxy.DelayTx(200*time.Millisecond, 100*time.Millisecond)
		l.PeerProxy.DelayRx(200*time.Millisecond, 100*time.Millisecond)
		s.hold(ctx, 0, 1)
		l.PeerProxy.UndelayTx()
		l.PeerProxy.UndelayRx()
		if err := s.c.Etcd.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHalfOpenEtcdConnection: replica 1's connection to one member stops
// carrying bytes either way without being closed (etcd's proxy
// blackholes it). Nothing tells the replica: it must find out by itself
// (gRPC keepalive) and serve from the other members while the
// connection stays half-open, not time out forever on it.
func TestHalfOpenEtcdConnection(t *testing.T) {
	runScenarioWith(t, scenarioOptions{cluster: []cluster.Option{cluster.WithClientProxies()}}, func(ctx context.Context, s *scenario) {
		p := s.c.ClientProxies[1][0]
		t.Logf("blackholing replica 1's connection to %s (%s)", s.c.Etcd.Members[0].Name, p.URL)
		p.BlackholeTx()
		p.BlackholeRx()
		s.holdRecovered(ctx, 1)
		p.UnblackholeTx()
		p.UnblackholeRx()
	})
}

// holdRecovered keeps the fault for faultHold and until each given replica
// has recovered from it while it holds: a span of recoveredSpan in which
// the replica acknowledged minAcks writes and no write through it timed
// out or otherwise ended unknown. It fails after recoverWithin.
func (s *scenario) holdRecovered(ctx context.Context, replicas ...int) {
	s.t.Helper()
	since := time.Now()
	s.hold(ctx, replicas...)
	const recoveredSpan = 10 * time.Second
	rctx, cancel := context.WithTimeout(ctx, recoverWithin)
	defer cancel()
	err := cluster.Until(rctx, "replicas recovered under the fault", func(context.Context) (bool, error) {
		now := time.Now()
		for _, r := range replicas {
			lastBad, acks := since, 0
			for _, op := range s.rec.Ops() {
				if op.Replica != r {
					continue
				}
				if op.Outcome == traffic.Unknown && op.Call.After(lastBad) {
					lastBad = op.Call
				}
			}
			for _, op := range s.rec.Ops() {
				if op.Replica == r && op.Outcome == traffic.Acknowledged && op.Call.After(lastBad) {
					acks++
				}
			}
			// An op called just now may still time out: only a span that
			// ended a whole op timeout ago counts.
			if now.Sub(lastBad) < recoveredSpan+trafficConfig.OpTimeout || acks < minAcks {
				return false, fmt.Errorf("replica %d: last unknown outcome %v ago, %d acks since", r, now.Sub(lastBad).Round(time.Second), acks)
			}
		}
		return true, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("recovered under the fault after %v", time.Since(since).Round(time.Second))
}

func (s *scenario) heal(ctx context.Context) {
	s.t.Helper()
	if err := s.c.Net.Heal(ctx); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Etcd.WaitHealthy(ctx); err != nil {
		s.t.Fatal(err)
	}
}
