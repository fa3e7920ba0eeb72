// Command etcd is one member of the robustness suite's etcd cluster: a
// tiny main around go.etcd.io/etcd/server/v3/embed, at the etcd version
// apiloom's own go.mod uses, so the suite needs no etcd release download
// and tests the server apiloom embeds. Each member is a process of its own,
// so that the suite can kill -9, SIGSTOP and restart it on its data.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	name := flag.String("name", "m0", "member name")
	dir := flag.String("data-dir", "", "data directory (required)")
	client := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL, listened on and advertised")
	peer := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL, listened on (and advertised unless --advertise-peer-url)")
	advertisePeer := flag.String("advertise-peer-url", "", "peer URL advertised to the other members, when they reach this one through a proxy (default: --listen-peer-url)")
	cluster := flag.String("initial-cluster", "", "name=peerURL,... of every member")
	state := flag.String("initial-cluster-state", "new", "new or existing (ignored once the data directory holds a member)")
	quota := flag.Int64("quota-backend-bytes", 0, "etcd's space quota: beyond it etcd raises the NOSPACE alarm and refuses writes; 0 is etcd's default (2 GiB)")
	flag.Parse()
	if *advertisePeer == "" {
		*advertisePeer = *peer
	}
	if err := run(*name, *dir, *client, *peer, *advertisePeer, *cluster, *state, *quota); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run(name, dir, client, peer, advertisePeer, cluster, state string, quota int64) error {
	if dir == "" || cluster == "" {
		return fmt.Errorf("--data-dir and --initial-cluster are required")
	}
	c, err := url.Parse(client)
	if err != nil {
		return err
	}
	p, err := url.Parse(peer)
	if err != nil {
		return err
	}
	ap, err := url.Parse(advertisePeer)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*c}, []url.URL{*c}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*p}, []url.URL{*ap}
	cfg.InitialCluster = cluster
	cfg.ClusterState = state
	cfg.InitialClusterToken = "apiloom-robustness"
	cfg.LogLevel = "warn"
	cfg.QuotaBackendBytes = quota
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-e.Err():
		return err
	case <-sig:
		return nil
	}
}
