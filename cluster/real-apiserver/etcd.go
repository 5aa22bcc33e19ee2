package main

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// freeLoopbackPort asks the kernel for an unused port on 127.0.0.1. Another process could take it
// before etcd binds it; on a test machine that is rare enough, and etcd then fails loudly.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd runs a single-member etcd in this process, on loopback without TLS (nothing but the API
// server in this same process talks to it), its data under dir. It returns once etcd serves.
func startEtcd(dir string, logLevel string) (*embed.Etcd, string, error) {
	clientPort, err := freeLoopbackPort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freeLoopbackPort()
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "lab-real"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// No metrics listener of its own: the default would take a fixed port.
	cfg.ListenMetricsUrls = nil
	cfg.LogLevel = logLevel
	// The data is thrown away on exit, so a crash losing the last writes costs nothing, and fsync on a
	// busy shared disk is what makes a test etcd slow.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("etcd did not start: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, clientURL.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcd stopped while starting: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("etcd was not ready after 60 s")
	}
}
